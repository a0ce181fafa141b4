// cost-analysis with a REAL read replica: its database on a private primary (migrated by the project's
// migration tool) and a pg_basebackup standby of it. Proves the app's reads are routed, not just the
// library's: analyze and list are served by the standby, a writer reads their write from the primary,
// and a stopped standby still answers 200.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { Pool } from 'pg';
import { bearer, startPrivatePostgres, startStandby, waitFor, type PrivatePostgres, type PrivateStandby } from '@platform/testing';
import { createTestCostAnalysis } from './test-support';

jest.setTimeout(120_000);
const root = path.resolve(__dirname, '../../..');
const DB = 'platform_cost_analysis';

describe('cost-analysis reads from a read replica', () => {
  let primary: PrivatePostgres;
  let standby: PrivateStandby;
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let admin: string;
  let reader: string;

  beforeAll(async () => {
    primary = await startPrivatePostgres({ prefix: 'ca-primary-' });
    const run = spawnSync(process.execPath, [path.join(root, 'tools/prisma/migrate.mjs'), '--app', 'cost-analysis', '--database-url', primary.url(DB)], { cwd: root, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`migrate failed: ${run.stderr}`);
    standby = await startStandby(primary);
    const pool = new Pool({ connectionString: primary.url(DB), max: 5 });
    pool.on('error', () => {});
    t = await createTestCostAnalysis({}, { db: { name: DB, url: primary.url(DB), pool, drop: () => pool.end() }, readReplicaUrl: standby.url(DB) });
    await waitFor(() => t.deps.reads.state() === 'healthy', 30_000, 'the replica healthy');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'writer' });
    reader = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'reader' });
    await t.db.pool.query(
      `INSERT INTO unified_cost (domain_id, unified_cost_id, workspace_id, project_id, service_account_id, data_source_id, provider, region_code, region_key,
         product, usage_type, usage_unit, billed_year, billed_month, aggregation_date, exchange_date, exchange_source, currency, is_confirmed,
         cost, cost_usd, service_account_name, data_source_name, project_name, workspace_name)
       SELECT 'd1', 'uc-' || i, 'ws-1', '', '', 'ds-1', 'aws', 'r', 'aws.r', 'p', 't', 'Hrs', '2024', '2024-0' || (1 + i % 3), '', '', 'MANUAL', 'USD', true,
         jsonb_build_object('USD', i), i, '', 'ds', '', 'ws'
       FROM generate_series(1, 30) i`,
    );
  });
  afterAll(async () => {
    await t?.close();
    await standby?.destroy();
    await primary?.destroy();
  });

  const post = (p: string, auth: string, body: object) => request(t.app).post(`/cost-analysis/v1/${p}`).set('Authorization', auth).send(body);
  const analyze = (auth: string) =>
    post('unified-cost/analyze', auth, { query: { granularity: 'MONTHLY', start: '2024-01', end: '2024-03', fields: { cost: { key: 'cost.USD', operator: 'sum' } } } });
  /** An analyze answer as month → cost. */
  const byMonth = (res: request.Response) => Object.fromEntries(res.body.results.map((r: any) => [r.date, r.cost]));
  const BEFORE = { '2024-01': 165, '2024-02': 145, '2024-03': 155 };
  const AFTER = { ...BEFORE, '2024-01': 166 };

  it('analyze and list are served by the replica', async () => {
    // The rows were written straight to the primary: the replica has them once it replayed them.
    await waitFor(async () => (await standby.query(DB, 'SELECT count(*)::int AS n FROM unified_cost'))[0].n === 30, 10_000, 'the rows replayed');
    // A health check that takes over a second (a loaded CI host) rightly sends reads to the primary
    // for a moment: the pair is asked again until it ran while the replica was healthy. Were reads not
    // routed to the replica at all, no attempt would pass and the wait fails.
    await waitFor(
      async () => {
        await waitFor(() => t.deps.reads.state() === 'healthy', 10_000, 'the replica healthy');
        const before = { ...t.deps.reads.served };
        const res = await analyze(reader);
        expect(res.status).toBe(200);
        expect(byMonth(res)).toEqual(BEFORE);
        const list = await post('unified-cost/list', reader, { query: { page: { limit: 5 } } });
        expect(list.status).toBe(200);
        expect(list.body.total_count).toBe(30);
        return t.deps.reads.served.replica >= before.replica + 2 && t.deps.reads.served.primary === before.primary;
      },
      30_000,
      'analyze and list served by the replica, none by the primary',
    );
  });

  it('a writer reads their write from the primary at once; others stay on the replica', async () => {
    await standby.pauseReplay();
    try {
      const set = await post('exchange-rate/set', admin, { domain_id: 'd1', currency: 'JPY', rate: 140.5 });
      expect(set.status).toBe(200);
      await t.db.pool.query(`UPDATE unified_cost SET cost_usd = cost_usd + 1 WHERE unified_cost_id = 'uc-3'`);
      const before = { ...t.deps.reads.served };
      const mine = await analyze(admin);
      expect(byMonth(mine)).toEqual(AFTER);
      expect(t.deps.reads.served.primary).toBe(before.primary + 1);
      const theirs = await analyze(reader);
      expect(byMonth(theirs)).toEqual(BEFORE);
      expect(t.deps.reads.served.replica).toBe(before.replica + 1);
    } finally {
      await standby.resumeReplay();
    }
  });

  let dsId = '';
  it('a get that reads through Prisma is served by the replica too', async () => {
    const ds = await post('data-source/register', admin, {
      name: 'replicated', resource_group: 'DOMAIN', schedule: { state: 'DISABLED' },
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: 'http://127.0.0.1:1/costs.csv' } },
    });
    expect(ds.status).toBe(200);
    dsId = ds.body.data_source_id;
    await waitFor(async () => (await standby.query(DB, 'SELECT count(*)::int AS n FROM data_source'))[0].n === 1, 10_000, 'the data source replayed');
    await waitFor(() => t.deps.reads.state() === 'healthy', 10_000, 'the replica healthy');
    const before = { ...t.deps.reads.served };
    const got = await post('data-source/get', reader, { data_source_id: dsId });
    expect(got.status).toBe(200);
    expect(got.body.name).toBe('replicated');
    expect(t.deps.reads.served.replica).toBe(before.replica + 1);
    expect(t.deps.reads.served.primary).toBe(before.primary);
  });

  it('a stopped replica: reads still answer 200, from the primary', async () => {
    standby.stop('immediate');
    for (let i = 0; i < 3; i++) {
      const res = await analyze(reader);
      expect(res.status).toBe(200);
      expect(byMonth(res)).toEqual(AFTER);
    }
    expect(t.deps.reads.state()).toBe('down');
    expect((await post('unified-cost/list', reader, {})).status).toBe(200);
    expect((await post('data-source/get', reader, { data_source_id: dsId })).status).toBe(200);
    standby.start();
    await waitFor(() => t.deps.reads.state() === 'healthy', 30_000, 'the replica back');
  });
});
