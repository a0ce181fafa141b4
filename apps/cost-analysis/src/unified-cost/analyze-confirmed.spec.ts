import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestCostAnalysis } from '../test-support';

/**
 * `unified-cost/analyze` `is_confirmed` is upstream's plain `bool` (UnifiedCostAnalyzeQuery, cloudforet-io/api
 * 2.0.435): a proto3 client cannot send false, it leaves it out, and upstream filters only on a true value
 * (python-core `append_query_filter` skips a false one). So true keeps the confirmed months, and false or
 * no is_confirmed at all answers every month; the query's own filter can ask for the unconfirmed ones.
 * March is confirmed, April is not (rows written directly; no worker runs to rebuild them).
 */
describe('cost-analysis unified-cost/analyze: is_confirmed as a proto3 bool', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let owner: string;
  const ROWS: [string, string, boolean, number][] = [
    ['uc-m1', '2024-03', true, 10],
    ['uc-m2', '2024-03', true, 5],
    ['uc-a1', '2024-04', false, 100],
  ];
  beforeAll(async () => {
    t = await createTestCostAnalysis();
    await t.directory.publish('d1', { projects: [{ project_id: 'p-1', workspace_id: 'ws-1', project_group_id: '', name: 'One' }], groups: [] });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    for (const [id, month, confirmed, usd] of ROWS) {
      await t.deps.pool.query(
        `INSERT INTO unified_cost (domain_id, unified_cost_id, workspace_id, project_id, service_account_id, data_source_id,
           provider, region_code, region_key, product, usage_type, usage_unit, billed_year, billed_month, aggregation_date,
           exchange_date, exchange_source, currency, is_confirmed, cost, cost_usd, service_account_name, data_source_name,
           project_name, workspace_name)
         VALUES ('d1', $1, 'ws-1', 'p-1', '', 'ds-1', 'aws', '', '', 'EC2', '', '', '2024', $2, '2024-05-01',
           '2024-05-01', 'MANUAL', 'USD', $3, $4, $5, '', 'ds', 'One', 'ws-1')`,
        [id, month, confirmed, JSON.stringify({ USD: usd }), usd],
      );
    }
  });
  afterAll(() => t.close());

  const analyze = async (body: object) => {
    const res = await request(t.app).post('/cost-analysis/v1/unified-cost/analyze').set('Authorization', owner).send(body);
    if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
    return res.body.results;
  };
  const query = { granularity: 'MONTHLY', start: '2024-01', end: '2024-12', fields: { usd: { key: 'cost.USD', operator: 'sum' } }, sort: [{ key: 'date', desc: false }] };
  const BOTH = [
    { date: '2024-03', usd: 15 },
    { date: '2024-04', usd: 100 },
  ];

  test('true keeps the confirmed months only', async () => {
    expect(await analyze({ query, is_confirmed: true })).toEqual([{ date: '2024-03', usd: 15 }]);
  });

  test('false and a missing is_confirmed are the same: not filtered', async () => {
    expect(await analyze({ query, is_confirmed: false })).toEqual(BOTH);
    expect(await analyze({ query })).toEqual(BOTH);
    expect(await analyze({ query, is_confirmed: null })).toEqual(BOTH);
  });

  test('the query filter asks for the unconfirmed months', async () => {
    expect(await analyze({ query: { ...query, filter: [{ k: 'is_confirmed', v: false, o: 'eq' }] } })).toEqual([{ date: '2024-04', usd: 100 }]);
  });

  test('a value that is not a bool is a 400', async () => {
    const res = await request(t.app).post('/cost-analysis/v1/unified-cost/analyze').set('Authorization', owner).send({ query, is_confirmed: 'yes' });
    expect([res.status, res.body.error.code, res.body.error.message]).toEqual([400, 'ERROR_INVALID_PARAMETER', expect.stringContaining('is_confirmed')]);
  });
});
