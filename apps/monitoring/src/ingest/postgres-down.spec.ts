import { createHash } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import type { Express } from 'express';
import Redis from 'ioredis';
import request from 'supertest';
import { createLogger } from '@platform/core';
import { bearer, TEST_REDIS_URL, waitFor } from '@platform/testing';
import { createApp } from '../app';
import { createTestMonitoring, type TestMonitoring } from '../test-support';
import { startPrivateRedis, startTcpProxy, type PrivateRedis } from './test-processes';
import { WebhookCopy } from './webhook-copy';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Proxy = Awaited<ReturnType<typeof startTcpProxy>>;
interface Hook {
  webhook_id: string;
  access_key: string;
  webhook_url: string;
}

/** Every string Redis holds under `pattern`, whatever the key's type (hash fields and values, list items, ...). */
async function redisStrings(redis: Redis, pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      out.push(key);
      const type = await redis.type(key);
      if (type === 'string') out.push((await redis.get(key)) ?? '');
      else if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
      else if (type === 'set') out.push(...(await redis.smembers(key)));
      else if (type === 'zset') out.push(...(await redis.zrange(key, 0, -1)));
      else if (type === 'stream') out.push(...(await redis.xrange(key, '-', '+')).flatMap(([id, fields]) => [id, ...fields]));
    }
  } while (cursor !== '0');
  return out;
}

/**
 * Two replicas of the app (A, with the worker, and B) whose PostgreSQL goes through a proxy the test
 * cuts: PostgreSQL is then unreachable for them (connections reset, new ones refused) while Redis
 * stays up. Their in-process cache keeps a webhook 60 s here, so only the copy's channel can make a
 * replica see a change in time.
 */
describe('the webhook URL while PostgreSQL is unreachable (the webhooks’ copy in Redis)', () => {
  let proxy: Proxy;
  let t: TestMonitoring;
  let replicaB: Express;
  let copyB: WebhookCopy;
  let owner: string;
  let control: Redis;

  beforeAll(async () => {
    const { hostname, port } = new URL(process.env.TEST_PG_ADMIN_URL || 'postgresql://postgres@127.0.0.1:5432/postgres');
    proxy = await startTcpProxy({ host: hostname, port: Number(port || 5432) });
    t = await createTestMonitoring({ appDatabaseUrl: (url) => proxy.via(url), ingest: { webhookCacheMs: 60_000, webhookLookupTimeoutMs: 1000 } });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    copyB = new WebhookCopy(t.deps.redis, t.deps.pool, { prefix: t.deps.redisPrefix, logger: createLogger('monitoring', 'silent') });
    copyB.start();
    replicaB = createApp({ ...t.deps, webhookCopy: copyB });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    control = new Redis(TEST_REDIS_URL);
    // Both replicas have published the copy once (at start).
    await waitFor(async () => (await control.hget(`${t.deps.redisPrefix}monitoring:webhooks`, '_')) !== null, 10_000, 'the copy published');
  });
  afterAll(async () => {
    copyB?.stop();
    control?.disconnect();
    await proxy?.restore().catch(() => {});
    await t?.close();
    await proxy?.stop();
  });

  const api = (p: string, body: object) => request(t.app).post(`/monitoring/v1/${p}`).set('Authorization', owner).send(body);
  const create = async (name: string): Promise<Hook> => {
    const res = await api('webhook/create', { name, plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' });
    expect(res.status).toBe(200);
    return res.body;
  };
  const post = (app: Express, w: Hook, key: string, path = new URL(w.webhook_url).pathname) =>
    request(app).post(path).send({ event_key: key, title: `event ${key}` });
  const stored = async (webhookId: string) =>
    (await t.db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1 AND outcome <> 'NOT_ACCEPTED'`, [webhookId])).rows[0].n;

  it('accepts on every replica while PostgreSQL is down; the worker stores each delivery once when it is back; no access key in Redis', async () => {
    const w = await create('outage');
    await proxy.cut();
    try {
      const answers = [];
      for (let i = 0; i < 40; i++) answers.push((await post(i % 2 ? replicaB : t.app, w, `k-${i}`)).status);
      expect(answers).toEqual(Array(40).fill(200));
      // event/create checks the webhook the same way.
      const op = await request(replicaB).post('/monitoring/v1/event/create').send({ webhook_id: w.webhook_id, access_key: w.access_key, data: { event_key: 'k-op', title: 'x' } });
      expect(op.status).toBe(200);
      // PostgreSQL is down for the replicas: readiness says so, an operation that reads it answers 503.
      expect((await request(t.app).get('/readyz')).body.checks).toMatchObject({ postgres: 'unavailable' });
      const get = await api('webhook/get', { webhook_id: w.webhook_id });
      expect(get.status).toBe(503);
      expect(get.body.error.code).toBe('ERROR_SERVICE_UNAVAILABLE');
      await sleep(1500);
      expect(await stored(w.webhook_id)).toBe(0);
      // The accepted deliveries wait in Redis; neither they nor the copy hold the access key.
      const strings = await redisStrings(control, `${t.queuePrefix}*`);
      expect(strings.join('\n')).toContain('k-39');
      expect(strings.filter((s) => s.includes(w.access_key))).toEqual([]);
    } finally {
      await proxy.restore();
    }
    await waitFor(async () => (await stored(w.webhook_id)) >= 41, 30_000, 'the deliveries stored once PostgreSQL is back', 100);
    await sleep(1000);
    const { rows } = await t.db.pool.query<{ event_key: string; n: number }>(`SELECT event_key, count(*)::int AS n FROM event WHERE webhook_id = $1 GROUP BY 1 ORDER BY 1`, [w.webhook_id]);
    expect(rows).toHaveLength(41);
    expect(rows.filter((r) => r.n !== 1)).toEqual([]);
    expect(await stored(w.webhook_id)).toBe(41);
    expect((await api('webhook/get', { webhook_id: w.webhook_id })).body.requests).toEqual({ total: 41, error: 0 });
    expect(await t.queue.getJobCounts('failed')).toEqual({ failed: 0 });
  }, 60_000);

  it('refuses, on every replica, a webhook disabled or deleted before the outage (the other replica within the channel’s latency), a wrong key and an unknown id', async () => {
    const [disabled, deleted, open] = [await create('to-disable'), await create('to-delete'), await create('open')];
    // Both replicas have all three in their cache (kept 60 s here).
    for (const app of [t.app, replicaB]) for (const w of [disabled, deleted, open]) expect((await post(app, w, 'warm')).status).toBe(200);

    expect((await api('webhook/disable', { webhook_id: disabled.webhook_id })).status).toBe(200);
    const changedAt = Date.now();
    expect((await api('webhook/delete', { webhook_id: deleted.webhook_id })).status).toBe(200);
    await proxy.cut();
    try {
      // The replica that wrote: at once. The other: as soon as the channel's message arrives.
      expect((await post(t.app, disabled, 'after')).body.error?.code).toBe('ERROR_WEBHOOK_STATE_DISABLED');
      expect((await post(t.app, deleted, 'after')).status).toBe(403);
      await waitFor(async () => (await post(replicaB, disabled, 'after')).status === 400, 2000, 'replica B refusing the disabled webhook', 10);
      const boundMs = Date.now() - changedAt;
      for (const app of [t.app, replicaB]) {
        const off = await post(app, disabled, 'after');
        expect(off.status).toBe(400);
        expect(off.body.error).toMatchObject({ code: 'ERROR_WEBHOOK_STATE_DISABLED', message: expect.stringContaining(disabled.webhook_id) });
        const gone = await post(app, deleted, 'after');
        const wrongKey = await post(app, open, 'after', new URL(open.webhook_url).pathname.replace(open.access_key, `${open.access_key.slice(0, -1)}x`));
        const unknown = await post(app, open, 'after', new URL(open.webhook_url).pathname.replace(open.webhook_id, 'webhook-000000000000'));
        for (const r of [gone, wrongKey, unknown]) {
          expect(r.status).toBe(403);
          expect(r.body.error.code).toBe('ERROR_PERMISSION_DENIED');
        }
        const op = await request(app).post('/monitoring/v1/event/create').send({ webhook_id: open.webhook_id, access_key: 'nope', data: {} });
        expect(op.status).toBe(403);
        expect((await post(app, open, 'after')).status).toBe(200);
      }
      // Nothing can be changed meanwhile: the change would not be committed.
      expect((await api('webhook/enable', { webhook_id: disabled.webhook_id })).status).toBe(503);
      process.stdout.write(`postgres-down: replica B refused the disabled webhook ${boundMs} ms after the disable was committed\n`);
    } finally {
      await proxy.restore();
    }
    await waitFor(
      async () => (await stored(open.webhook_id)) >= 4 && (await stored(disabled.webhook_id)) >= 2 && (await stored(deleted.webhook_id)) >= 2,
      30_000,
      'the accepted deliveries stored',
    );
    await sleep(500);
    // Stored: the two warm-up deliveries of each, and the open webhook's two after the changes. No more.
    expect(await stored(open.webhook_id)).toBe(4);
    expect(await stored(disabled.webhook_id)).toBe(2);
    expect(await stored(deleted.webhook_id)).toBe(2);
  }, 60_000);

  it('answers 503 when neither PostgreSQL nor a complete copy can answer; a republish makes the copy whole again', async () => {
    const w = await create('no-copy');
    const key = `${t.deps.redisPrefix}monitoring:webhooks`;
    await control.del(key); // as a Redis that came back empty, before anyone republished
    await proxy.cut();
    try {
      const res = await post(replicaB, w, 'refused');
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('ERROR_SERVICE_UNAVAILABLE');
    } finally {
      await proxy.restore();
    }
    await waitFor(() => t.deps.webhookCopy.republish().then(() => true, () => false), 10_000, 'a republish');
    await proxy.cut();
    try {
      expect((await post(replicaB, w, 'accepted')).status).toBe(200);
    } finally {
      await proxy.restore();
    }
    await waitFor(async () => (await stored(w.webhook_id)) === 1, 30_000, 'the delivery stored');
  }, 60_000);
});

/** The copy lives in Redis: a Redis that comes back empty gets it again from PostgreSQL, unasked. */
describe('the webhooks’ copy after Redis restarts empty', () => {
  let redis: PrivateRedis;
  let proxy: Proxy;
  let t: TestMonitoring;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    const { hostname, port } = new URL(process.env.TEST_PG_ADMIN_URL || 'postgresql://postgres@127.0.0.1:5432/postgres');
    proxy = await startTcpProxy({ host: hostname, port: Number(port || 5432) });
    t = await createTestMonitoring({ redisUrl: redis.url, appDatabaseUrl: (url) => proxy.via(url) });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
  }, 60_000);
  afterAll(async () => {
    await proxy?.restore().catch(() => {});
    await t?.close();
    await proxy?.stop();
    await redis?.stop();
  });

  it('is republished when Redis is back, and the URL accepts from it while PostgreSQL is down', async () => {
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const w = (
      await request(t.app)
        .post('/monitoring/v1/webhook/create')
        .set('Authorization', owner)
        .send({ name: 'restart', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id: 'project-1' })
    ).body as Hook;
    const key = `${t.deps.redisPrefix}monitoring:webhooks`;
    const control = new Redis(redis.url, { maxRetriesPerRequest: null });
    control.on('error', () => {});
    try {
      await redis.kill();
      rmSync(redis.dir, { recursive: true, force: true });
      mkdirSync(redis.dir);
      await redis.start();
      await waitFor(async () => (await control.hget(key, w.webhook_id).catch(() => null)) !== null && (await control.hget(key, '_')) !== null, 20_000, 'the copy republished', 50);
      const entry = (await control.hget(key, w.webhook_id))!;
      expect(entry).not.toContain(w.access_key);
      expect(entry).toContain(createHash('sha256').update(w.access_key).digest('hex'));
      await waitFor(async () => (await request(t.app).get('/readyz')).status === 200, 20_000, 'ready again');
      await proxy.cut();
      try {
        expect((await request(t.app).post(new URL(w.webhook_url).pathname).send({ event_key: 'after-restart', title: 'x' })).status).toBe(200);
      } finally {
        await proxy.restore();
      }
      await waitFor(async () => (await t.db.pool.query(`SELECT 1 FROM event WHERE webhook_id = $1`, [w.webhook_id])).rows.length === 1, 30_000, 'the delivery stored');
    } finally {
      control.disconnect();
    }
  }, 90_000);
});
