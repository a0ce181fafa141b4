import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import { buildWorker, killProcess, startPrivateRedis, startWorkerProcess, type PrivateRedis } from './test-processes';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Answer {
  key: string;
  status: number;
  sentAt: number;
  answeredAt: number;
}

/**
 * The app (in this process) and a worker process run against a redis-server of the test's own,
 * persisted as production runs it (appendonly, appendfsync always). Senders keep posting while that
 * Redis is SIGKILLed and started again on the same port and dir; like a monitoring system, a sender
 * posts a payload again after a 503 until it gets a 2xx. Then Redis stalls (CLIENT PAUSE) so that an
 * enqueue outlives its timeout and Redis takes the job after the sender was answered 503.
 */
describe('monitoring with a Redis of its own: a restart, a stall', () => {
  let redis: PrivateRedis;
  let t: TestMonitoring;
  let server: http.Server;
  let base: string;
  let worker: ChildProcess | undefined;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const workerFile = buildWorker();
    t = await createTestMonitoring({ worker: false, redisUrl: redis.url, ingest: { enqueueTimeoutMs: 1000 }, plugins: true });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    server = http.createServer(t.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    worker = await startWorkerProcess(workerFile, {
      DATABASE_URL: t.db.url,
      PLUGIN_DATABASE_URL: t.pluginTable!.db.url,
      REDIS_URL: redis.url,
      QUEUE_PREFIX: t.queuePrefix,
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
    });
  }, 60_000);
  afterAll(async () => {
    if (worker) await killProcess(worker);
    server?.closeAllConnections();
    server?.close();
    await t?.close();
    await redis?.stop();
  });

  const readyz = async () => (await request(t.app).get('/readyz')).status;
  const storedDeliveries = async () =>
    (await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery WHERE outcome <> 'NOT_ACCEPTED'`)).rows[0].n;

  it('stores every payload answered 2xx exactly once; answers 503 while Redis is down; app, worker and readiness recover', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (
      await request(t.app)
        .post('/monitoring/v1/webhook/create')
        .set('Authorization', owner)
        .send({ name: 'stream', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })
    ).body;
    const url = `${base}${new URL(w.webhook_url).pathname}`;

    const answers: Answer[] = [];
    const accepted: string[] = [];
    const unexpected: Answer[] = [];
    let next = 0;
    let stopping = false;
    // Eight senders, each posting its next payload as soon as the last one was taken; 503 → again.
    const send = async () => {
      while (!stopping) {
        const key = `k-${next++}`;
        for (;;) {
          const sentAt = Date.now();
          const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event_key: key, title: `event ${key}` }) });
          await res.arrayBuffer();
          const answer = { key, status: res.status, sentAt, answeredAt: Date.now() };
          answers.push(answer);
          if (res.status === 200) {
            accepted.push(key);
            break;
          }
          if (res.status !== 503) {
            unexpected.push(answer);
            break;
          }
          await sleep(20);
        }
      }
    };
    const senders = Array.from({ length: 8 }, send);

    await waitFor(async () => (await storedDeliveries()) >= 300, 30_000, 'deliveries before the kill');
    expect(await readyz()).toBe(200);

    await redis.kill();
    const downAt = Date.now();
    await sleep(400);
    const readyWhileDown = await readyz();
    await sleep(1100);
    const upAt = Date.now();
    await redis.start();

    // Recovery, with no restart of the app or the worker: ready again, payloads taken and stored again.
    await waitFor(async () => (await readyz()) === 200, 20_000, '/readyz 200 after the restart');
    const acceptedAtRestart = accepted.length;
    await waitFor(() => accepted.length >= acceptedAtRestart + 300, 30_000, 'payloads accepted after the restart');
    stopping = true;
    await Promise.all(senders);
    await waitFor(async () => (await storedDeliveries()) >= accepted.length, 60_000, 'every accepted payload stored');
    await sleep(3000); // jobs left active by the outage re-run once their lock lapses: they must add nothing

    expect(unexpected).toEqual([]);
    expect(readyWhileDown).toBe(503);
    const whileDown = answers.filter((a) => a.sentAt >= downAt && a.answeredAt <= upAt);
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((a) => a.status !== 503)).toEqual([]);

    const { rows } = await t.db.pool.query<{ event_key: string; n: number }>(`SELECT event_key, count(*)::int AS n FROM event WHERE webhook_id = $1 GROUP BY event_key`, [w.webhook_id]);
    const seen = new Map(rows.map((r) => [r.event_key, r.n]));
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(accepted.filter((k) => !seen.has(k))).toEqual([]);
    expect(seen.size).toBe(accepted.length);
    expect(await storedDeliveries()).toBe(accepted.length);
    const hook = await request(t.app).post('/monitoring/v1/webhook/get').set('Authorization', owner).send({ webhook_id: w.webhook_id });
    expect(hook.body.requests).toEqual({ total: accepted.length, error: 0 });
    expect(await t.queue.getJobCounts('failed')).toEqual({ failed: 0 });
    expect(worker!.exitCode).toBeNull();
    process.stdout.write(
      `redis down ${upAt - downAt} ms: ${whileDown.length} answers while down (all 503), ${answers.filter((a) => a.status === 503).length} 503s in all, ${accepted.length} payloads accepted and stored once\n`,
    );
  }, 180_000);

  it('a payload Redis takes only after the enqueue timed out is answered 503 and never stored; the retry is stored once', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (
      await request(t.app)
        .post('/monitoring/v1/webhook/create')
        .set('Authorization', owner)
        .send({ name: 'stall', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })
    ).body;
    const post = () => request(t.app).post(new URL(w.webhook_url).pathname).send({ event_key: 'late', title: 'queued after its 503' });
    const control = new Redis(redis.url);
    try {
      // The worker is held still so the late job can be seen in the queue before it runs.
      process.kill(worker!.pid!, 'SIGSTOP');
      await control.call('CLIENT', 'PAUSE', '1800', 'WRITE');
      const refused = await post(); // the enqueue timeout is 1000 ms here
      expect(refused.status).toBe(503);
      await waitFor(async () => (await t.queue.getJobCounts('waiting')).waiting === 1, 10_000, 'the late job in the queue');
      const [late] = await t.queue.getJobs(['waiting']);
      expect(JSON.stringify(late.data)).toContain('queued after its 503');
    } finally {
      process.kill(worker!.pid!, 'SIGCONT');
      control.disconnect();
    }
    await waitFor(async () => {
      const c = await t.queue.getJobCounts('waiting', 'active');
      return c.waiting + c.active === 0;
    }, 20_000, 'the late job processed');
    const { rows } = await t.db.pool.query(`SELECT outcome FROM webhook_delivery WHERE webhook_id = $1`, [w.webhook_id]);
    expect(rows).toEqual([{ outcome: 'NOT_ACCEPTED' }]);
    expect((await t.db.pool.query(`SELECT 1 FROM event WHERE webhook_id = $1`, [w.webhook_id])).rows).toEqual([]);

    // The sender posts it again, as after any 503: stored once.
    expect((await post()).status).toBe(200);
    await waitFor(async () => (await t.db.pool.query(`SELECT 1 FROM event WHERE webhook_id = $1`, [w.webhook_id])).rows.length === 1, 20_000, 'the retry stored');
    const hook = await request(t.app).post('/monitoring/v1/webhook/get').set('Authorization', owner).send({ webhook_id: w.webhook_id });
    expect(hook.body.requests).toEqual({ total: 1, error: 0 });
  }, 60_000);
});
