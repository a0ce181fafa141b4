import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ChildProcess } from 'node:child_process';
import request from 'supertest';
import { bearer, TEST_REDIS_URL } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import { buildWorker, killProcess, startWorkerProcess } from './test-processes';

describe('monitoring worker crash', () => {
  let t: TestMonitoring;
  let server: http.Server;
  let base: string;
  let workerFile: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    workerFile = buildWorker();
    t = await createTestMonitoring({ worker: false, plugins: true });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    server = http.createServer(t.app);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    for (const c of children) await killProcess(c);
    server.closeAllConnections();
    server.close();
    await t.close();
  });

  const startWorker = async () => {
    const child = await startWorkerProcess(workerFile, {
      DATABASE_URL: t.db.url,
      PLUGIN_DATABASE_URL: t.pluginTable!.db.url,
      REDIS_URL: TEST_REDIS_URL,
      QUEUE_PREFIX: t.queuePrefix,
      WORKER_CONCURRENCY: '64',
      WORKER_BATCH_SIZE: '20',
      WORKER_LOCK_DURATION_MS: '2000',
      WORKER_STALLED_INTERVAL_MS: '1000',
    });
    children.push(child);
    return child;
  };

  it('stores every accepted payload exactly once across a SIGKILL of the worker mid-stream', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (
      await request(t.app)
        .post('/monitoring/v1/webhook/create')
        .set('Authorization', owner)
        .send({ name: 'stream', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })
    ).body;
    const url = `${base}${new URL(w.webhook_url).pathname}`;

    const total = 1200;
    const accepted: string[] = [];
    let next = 0;
    // Eight senders post as fast as they are answered, for the whole test.
    const send = async () => {
      while (next < total) {
        const key = `k-${next++}`;
        const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ event_key: key, title: `event ${key}` }) });
        if (res.status === 200) accepted.push(key);
        await res.arrayBuffer();
      }
    };
    const senders = Array.from({ length: 8 }, send);

    const first = await startWorker();
    await t.waitForDeliveries(150, 30_000);
    // Kill it in the middle of jobs: once it holds some.
    let counts = await t.queue.getJobCounts('active', 'waiting');
    for (const end = Date.now() + 10_000; counts.active === 0 && Date.now() < end; ) counts = await t.queue.getJobCounts('active', 'waiting');
    await killProcess(first);
    expect(counts.active).toBeGreaterThan(0);
    const storedAtKill = await t.waitForDeliveries(0);
    // Payloads keep arriving while no worker runs; then a new worker takes over (and the stalled jobs).
    await new Promise((r) => setTimeout(r, 500));
    await startWorker();
    await Promise.all(senders);

    expect(accepted.length).toBe(total);
    await t.waitForDeliveries(accepted.length, 60_000);
    await new Promise((r) => setTimeout(r, 3000)); // stalled jobs re-run after the lock lapses: they must add nothing
    const { rows } = await t.db.pool.query<{ event_key: string; n: number }>(`SELECT event_key, count(*)::int AS n FROM event WHERE webhook_id = $1 GROUP BY event_key`, [w.webhook_id]);
    const seen = new Map(rows.map((r) => [r.event_key, r.n]));
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(accepted.filter((k) => !seen.has(k))).toEqual([]);
    expect(seen.size).toBe(accepted.length);
    const deliveries = await t.db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1', [w.webhook_id]);
    expect(deliveries.rows[0].n).toBe(accepted.length);
    const hook = await request(t.app).post('/monitoring/v1/webhook/get').set('Authorization', owner).send({ webhook_id: w.webhook_id });
    expect(hook.body.requests).toEqual({ total: accepted.length, error: 0 });
    expect(await t.queue.getJobCounts('failed')).toEqual({ failed: 0 });
    // For the record: how much was in flight when the worker died.
    process.stdout.write(`killed with ${JSON.stringify(counts)} jobs queued, ${storedAtKill} stored\n`);
  }, 120_000);
});
