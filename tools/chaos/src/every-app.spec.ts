import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { mintToken, testKeys, waitFor } from '@platform/testing';
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './dependencies';
import { startApps, type RunningApps } from './processes';

/**
 * Every app and worker, built as for production and run by the `npm start` supervisor on a PostgreSQL
 * cluster and a Redis of the test's own, through a PostgreSQL restart and a Redis restart: while
 * PostgreSQL is down every operation that reads it answers 503 (never 500, never a wrong answer such as
 * 401 for a login) and every /readyz 503; after, 200 again with no restart. While Redis is down the
 * apps that use it answer /readyz 503 and no operation answers 500. A Redis that comes back empty gets
 * the project directory from identity again, once PostgreSQL answers. No process ever exits.
 */
const DOMAIN = 'domain-local';
const WORKSPACE = 'workspace-local';
const PASSWORD = 'chaos-admin-password';

/** One operation per app, and what it reads: Prisma (through the driver adapter) or raw SQL (the query DSL, pg). */
const OPERATIONS: { app: string; path: string; body: object; via: 'prisma' | 'sql'; anonymous?: boolean; admin?: boolean }[] = [
  {
    app: 'identity',
    path: '/identity/v2/token/issue',
    body: { credentials: { user_id: 'admin', password: PASSWORD }, domain_id: DOMAIN },
    via: 'prisma',
    anonymous: true,
  },
  { app: 'identity', path: '/identity/v2/project-group/list', body: {}, via: 'sql' },
  { app: 'cost-analysis', path: '/cost-analysis/v1/exchange-rate/list', body: { domain_id: DOMAIN }, via: 'prisma' },
  { app: 'cost-analysis', path: '/cost-analysis/v1/job/list', body: {}, via: 'sql' },
  { app: 'statistics', path: '/statistics/v1/storage/list', body: { domain_id: DOMAIN }, via: 'sql', admin: true },
  { app: 'repository', path: '/repository/v2/schema/list', body: { domain_id: DOMAIN }, via: 'sql' },
  { app: 'monitoring', path: '/monitoring/v1/webhook/list', body: {}, via: 'sql' },
  { app: 'inventory', path: '/inventory/v1/cloud-service/list', body: {}, via: 'sql' },
  { app: 'opsflow', path: '/opsflow/v1/event/list', body: {}, via: 'sql' },
  { app: 'plugin', path: '/plugin/v1/supervisor/list', body: {}, via: 'sql', admin: true },
];
const APPS = ['identity', 'cost-analysis', 'statistics', 'repository', 'monitoring', 'inventory', 'opsflow', 'plugin'];
/** The apps whose readiness includes Redis. */
const REDIS_APPS = ['identity', 'cost-analysis', 'monitoring', 'inventory', 'opsflow', 'plugin'];

describe('every app through a PostgreSQL restart and a Redis restart', () => {
  let dir: string;
  let logFile: string;
  let pgc: PrivatePostgres;
  let redis: PrivateRedis;
  let apps: RunningApps;
  let token: string;
  let adminToken: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-apps-'));
    logFile = path.join(dir, 'processes.log');
    [pgc, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    apps = await startApps({
      apps: APPS,
      pg: pgc,
      redisUrl: redis.url,
      dir,
      logFile,
      env: { JWT_PUBLIC_KEY: testKeys.publicPem, JWT_PRIVATE_KEY: testKeys.privatePem, BOOTSTRAP_PASSWORD: PASSWORD },
    });
    token = await mintToken({ domainId: DOMAIN, workspaceId: WORKSPACE, roleType: 'WORKSPACE_OWNER', ttlSeconds: 3600 });
    adminToken = await mintToken({ domainId: DOMAIN, roleType: 'DOMAIN_ADMIN', ttlSeconds: 3600 });
  }, 240_000);

  afterAll(async () => {
    await apps?.sup.stop();
    await pgc?.destroy();
    await redis?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const call = async (op: (typeof OPERATIONS)[number]) => {
    try {
      const res = await fetch(`${apps.url[op.app]}${op.path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(!op.anonymous && { authorization: `Bearer ${op.admin ? adminToken : token}` }) },
        body: JSON.stringify(op.body),
        signal: AbortSignal.timeout(20_000),
      });
      const body = (await res.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
      return { status: res.status, code: body?.error?.code };
    } catch (e) {
      return { status: 0, code: (e as Error).message };
    }
  };
  const readyz = (app: string) => fetch(`${apps.url[app]}/readyz`, { signal: AbortSignal.timeout(20_000) }).then((r) => r.status, () => 0);
  const statuses = async () => Object.fromEntries(await Promise.all(OPERATIONS.map(async (op) => [`${op.via} ${op.path}`, (await call(op)).status])));
  const readiness = async (list = APPS) => Object.fromEntries(await Promise.all(list.map(async (a) => [a, await readyz(a)])));
  const all = <T>(keys: string[], v: T) => Object.fromEntries(keys.map((k) => [k, v]));
  const opKeys = OPERATIONS.map((op) => `${op.via} ${op.path}`);

  it('answers 503 while PostgreSQL is down (a clean stop, then a crash), 200 once it is back, with no restart', async () => {
    expect(await statuses()).toEqual(all(opKeys, 200));
    for (const mode of ['fast', 'immediate'] as const) {
      pgc.stop(mode);
      try {
        const down = await Promise.all(OPERATIONS.map(async (op) => [`${op.via} ${op.path}`, await call(op)] as const));
        expect(Object.fromEntries(down)).toEqual(all(opKeys, { status: 503, code: 'ERROR_SERVICE_UNAVAILABLE' }));
        expect(await readiness()).toEqual(all(APPS, 503));
      } finally {
        pgc.start();
      }
      await waitFor(async () => Object.values(await readiness()).every((s) => s === 200), 60_000, `every app ready after postgres stop -m ${mode}`, 200);
      expect(await statuses()).toEqual(all(opKeys, 200));
    }
  }, 180_000);

  it('answers /readyz 503 while Redis is down and no 500 from any operation; all ready again once Redis is back', async () => {
    await redis.kill();
    try {
      expect(await readiness(REDIS_APPS)).toEqual(all(REDIS_APPS, 503));
      const down = await statuses();
      expect(Object.entries(down).filter(([, s]) => s !== 200 && s !== 503)).toEqual([]);
    } finally {
      await redis.start();
    }
    await waitFor(async () => Object.values(await readiness()).every((s) => s === 200), 60_000, 'every app ready after the Redis restart', 200);
    expect(await statuses()).toEqual(all(opKeys, 200));
  }, 120_000);

  it('identity publishes the project directory again once Redis comes back empty, even while PostgreSQL is still down', async () => {
    const probe = new Redis(redis.url);
    const published = () => probe.exists(`dir:{${DOMAIN}}`);
    try {
      expect(await published()).toBe(1);
      pgc.stop('fast');
      try {
        // Redis without persistence: it comes back with nothing, while identity cannot read Postgres.
        await redis.kill();
        await redis.start({ empty: true });
        await waitFor(async () => (await readyz('identity')) === 503 && probe.status === 'ready', 20_000, 'identity and the probe back on Redis');
        await new Promise((r) => setTimeout(r, 1500)); // identity's first publish attempts fail meanwhile
        expect(await published()).toBe(0);
      } finally {
        pgc.start();
      }
      await waitFor(async () => (await published()) === 1, 30_000, 'the directory published again', 200);
    } finally {
      probe.disconnect();
    }
  }, 90_000);

  it('no process exited: every app and worker kept its first pid', () => {
    for (const label of apps.labels) expect({ label, pids: apps.sup.pids(label).length, exits: apps.sup.exits(label) }).toEqual({ label, pids: 1, exits: [] });
    const log = readFileSync(logFile, 'utf8');
    expect(log).toMatch(/postgres connection error/);
    expect(log).not.toMatch(/Unhandled|uncaught/i);
  });
});
