// Read replicas against a REAL streaming standby: a private primary (initdb) and a pg_basebackup -R
// standby of it, both on ports of their own (libs/testing private-postgres.ts). The shared cluster is
// never touched.
import { createTestRedis, startPrivatePostgres, startStandby, waitFor, type PrivatePostgres, type PrivateStandby } from '@platform/testing';
import { createPool, createReplicaPool, isReplicaFault, lsnValue, ReadRouter, type Pool } from './index';

jest.setTimeout(120_000);

const A = { domainId: 'd1', userId: 'alice' };
const B = { domainId: 'd1', userId: 'bob' };
const MAX_LAG = 1_500;

describe('ReadRouter with a streaming replica', () => {
  let primary: PrivatePostgres;
  let standby: PrivateStandby;
  let primaryPool: Pool;
  let router: ReadRouter;
  let other: ReadRouter;
  let t: ReturnType<typeof createTestRedis>;
  const started = Date.now();
  const make = (checkMs = 100) =>
    new ReadRouter({
      primary: primaryPool,
      replica: createReplicaPool(standby.url('postgres'), { max: 4, connectTimeoutMs: 500, statementTimeoutMs: 2_000 }),
      redis: t.redis,
      keyPrefix: t.prefix,
      maxLagMs: MAX_LAG,
      checkMs,
    });

  beforeAll(async () => {
    primary = await startPrivatePostgres({ prefix: 'replica-primary-' });
    await primary.query('postgres', 'CREATE TABLE note (id serial PRIMARY KEY, body text NOT NULL)');
    standby = await startStandby(primary);
    t = createTestRedis('read-router');
    primaryPool = createPool(primary.url('postgres'), { max: 4 });
    router = make();
    // A second process of the same app: shares only Redis with the first.
    other = make();
    await waitFor(() => router.state() === 'healthy' && other.state() === 'healthy', 30_000, 'the replica to be healthy');
  });

  afterAll(async () => {
    await router?.close();
    await other?.close();
    await primaryPool?.end();
    await standby?.destroy();
    await primary?.destroy();
    await t?.cleanup();
    console.log(`read replica suite: ${((Date.now() - started) / 1000).toFixed(1)} s including initdb, pg_basebackup and both servers' start`);
  });

  const servedBy = async (caller = B, r = router) => (await r.for(caller).query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0].standby;
  const bodies = async (caller = B, r = router) => (await r.for(caller).query<{ body: string }>('SELECT body FROM note ORDER BY id')).rows.map((x) => x.body);

  it('sends reads to the replica and leaves writes to the primary', async () => {
    expect(await servedBy()).toBe(true);
    expect((await router.primary.query('SELECT pg_is_in_recovery() AS r')).rows[0].r).toBe(false);
    // A client made from the replica's pool (as a Prisma client is), once.
    const made: Pool[] = [];
    const make = (p: Pool) => (made.push(p), p);
    const viaClient = () => router.withClient(B, router.primary, make, async (c) => (await c.query('SELECT pg_is_in_recovery() AS r')).rows[0].r);
    expect(await viaClient()).toBe(true);
    expect(await viaClient()).toBe(true);
    expect(made).toEqual([router.replica]);
    // The replica refuses writes: a read path can never write by mistake.
    const e = await router.replica!.query(`INSERT INTO note (body) VALUES ('x')`).catch((err) => err);
    expect(e.code).toBe('25006');
    // An error of the SQL itself is the caller's, not a reason to go to the primary.
    await expect(router.for(B).query('SELECT 1/0')).rejects.toMatchObject({ code: '22012' });
    expect(router.state()).toBe('healthy');
  });

  it('a caller reads their own write at once, in this process and in another one', async () => {
    await router.primary.query(`INSERT INTO note (body) VALUES ('seen')`);
    await router.wrote(A);
    expect(await bodies(A)).toContain('seen');
    expect(await servedBy(A)).toBe(false);
    expect(await bodies(A, other)).toContain('seen');
    expect(await servedBy(A, other)).toBe(false);
    // Once the replica replayed it, the writer reads from the replica again.
    await waitFor(async () => (await servedBy(A)) && (await servedBy(A, other)), 10_000, 'the writer back on the replica');
    expect(await bodies(A)).toContain('seen');
  });

  it('a paused replay: others read the replica until the lag passes the bound, then the primary', async () => {
    await standby.pauseReplay();
    try {
      await router.primary.query(`INSERT INTO note (body) VALUES ('while paused')`);
      await router.wrote(A);
      // Bob did not write: the replica is still within the bound, and does not have the row.
      expect(await servedBy(B)).toBe(true);
      expect(await bodies(B)).not.toContain('while paused');
      // Alice did: the primary.
      expect(await bodies(A)).toContain('while paused');
      // Past the bound the replica is lagging: everyone reads the primary.
      await waitFor(() => router.state() === 'lagging', 10_000, 'the replica to lag');
      expect(router.lagMs()).toBeGreaterThan(MAX_LAG);
      expect(await servedBy(B)).toBe(false);
      expect(await bodies(B)).toContain('while paused');
    } finally {
      await standby.resumeReplay();
    }
    await waitFor(() => router.state() === 'healthy', 10_000, 'the replica to catch up');
    expect(await servedBy(B)).toBe(true);
    expect(await bodies(B)).toContain('while paused');
  });

  it('a stopped replica: reads are answered by the primary, and the replica is used again once it is back', async () => {
    // Processes whose next check is a minute away: they still take the replica for healthy when it stops.
    const [bySql, byClient] = [make(60_000), make(60_000)];
    await Promise.all([bySql.check(), byClient.check()]);
    expect([bySql.state(), byClient.state()]).toEqual(['healthy', 'healthy']);
    standby.stop('immediate');
    try {
      // The read in flight fails over to the primary within the query, by SQL and through a client.
      expect(await bodies(B, bySql)).toContain('seen');
      expect(bySql.served.fallback).toBe(1);
      expect(bySql.state()).toBe('down');
      expect(await byClient.withClient(B, byClient.primary, (p) => p, async (c) => (await c.query('SELECT pg_is_in_recovery() AS r')).rows[0].r)).toBe(false);
      expect(byClient.served.fallback).toBe(1);
      await bySql.check(); // down stays down
      expect(bySql.state()).toBe('down');
    } finally {
      await bySql.close();
      await byClient.close();
    }
    await waitFor(() => router.state() === 'down', 10_000, 'the router to see it down');
    for (let i = 0; i < 5; i++) expect(await servedBy(B)).toBe(false);
    await waitFor(() => other.state() === 'down', 10_000, 'the other process to see it down');
    expect(await servedBy(B, other)).toBe(false);
    standby.start();
    await waitFor(() => router.state() === 'healthy' && other.state() === 'healthy', 30_000, 'the replica back');
    expect(await servedBy(B)).toBe(true);
  });
});

describe('ReadRouter without a replica', () => {
  it('sends every read to the primary and records nothing', async () => {
    const pool = createPool('postgresql://postgres@127.0.0.1:5432/postgres', { max: 1 });
    const r = new ReadRouter({ primary: pool });
    expect(r.state()).toBe('none');
    await r.wrote(A);
    expect(await r.pool(A)).toBe(pool);
    expect((await r.for(A).query('SELECT 1 AS one')).rows[0].one).toBe(1);
    await r.close();
    await pool.end();
  });

  it('orders LSNs and tells replica faults from SQL errors', () => {
    expect(lsnValue('16/B374D848') > lsnValue('15/FFFFFFFF')).toBe(true);
    expect(lsnValue('0/10') > lsnValue('0/F')).toBe(true);
    expect(isReplicaFault(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isReplicaFault({ code: 'ECONNREFUSED' })).toBe(true);
    expect(isReplicaFault({ code: '57P01' })).toBe(true);
    expect(isReplicaFault({ code: '40001' })).toBe(true);
    expect(isReplicaFault({ code: '42P01' })).toBe(false);
  });
});
