import request from 'supertest';
import { bearer, membershipDirectory } from '@platform/testing';
import { createTestCostAnalysis } from '../test-support';

/**
 * WORKSPACE_MEMBER tokens read the unified costs of their projects only (libs/directory ProjectScope,
 * upstream's users_projects). G > G1 > project A: the member belongs to G, an ancestor of A's group;
 * B is not theirs; some costs have no project.
 */
describe('cost-analysis unified costs: workspace members read their projects only', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let owner: string;
  let member: string;
  let admin: string;
  const dir = (groupUsers: string[]) => membershipDirectory('ws-1', groupUsers);
  const ROWS: [string, string, number][] = [
    ['uc-a1', 'A', 10],
    ['uc-a2', 'A', 5],
    ['uc-b1', 'B', 100],
    ['uc-none', '', 1000],
  ];

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    await t.directory.publish('dm', dir(['member']));
    owner = await bearer({ domainId: 'dm', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'dm', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    admin = await bearer({ domainId: 'dm', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    for (const [id, project, usd] of ROWS) {
      await t.deps.pool.query(
        `INSERT INTO unified_cost (domain_id, unified_cost_id, workspace_id, project_id, service_account_id, data_source_id,
           provider, region_code, region_key, product, usage_type, usage_unit, billed_year, billed_month, aggregation_date,
           exchange_date, exchange_source, currency, is_confirmed, cost, cost_usd, service_account_name, data_source_name,
           project_name, workspace_name)
         VALUES ('dm', $1, 'ws-1', $2, '', 'ds-1', 'aws', '', '', 'EC2', '', '', '2024', '2024-03', '2024-04-15',
           '2024-03-31', 'MANUAL', 'USD', true, $3, $4, '', 'ds', $2, 'ws-1')`,
        [id, project, JSON.stringify({ USD: usd }), usd],
      );
    }
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/cost-analysis/v1/unified-cost/${verb}`).set('Authorization', auth).send(body);
  const ids = async (auth: string) => {
    const res = await call('list', auth);
    expect(res.status).toBe(200);
    return res.body.results.map((r: { unified_cost_id: string }) => r.unified_cost_id).sort();
  };
  const total = async (auth: string) => {
    const res = await call('analyze', auth, { query: { granularity: 'MONTHLY', start: '2024-03', end: '2024-03', fields: { usd: { key: 'cost.USD', operator: 'sum' } } }, is_confirmed: true });
    expect(res.status).toBe(200);
    return res.body.results[0]?.usd ?? 0;
  };

  it('get, list, analyze and stat show a member the costs of their projects; owners and admins see all', async () => {
    expect(await ids(member)).toEqual(['uc-a1', 'uc-a2']);
    expect(await ids(owner)).toEqual(['uc-a1', 'uc-a2', 'uc-b1', 'uc-none']);
    expect(await ids(admin)).toEqual(['uc-a1', 'uc-a2', 'uc-b1', 'uc-none']);
    expect(await total(member)).toBe(15);
    expect(await total(owner)).toBe(1115);
    const stat = await call('stat', member, { query: { aggregate: [{ group: { keys: [{ key: 'project_id', name: 'p' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(stat.body.results).toEqual([{ p: 'A', n: 2 }]);
    expect((await call('get', member, { unified_cost_id: 'uc-a1' })).status).toBe(200);
    for (const id of ['uc-b1', 'uc-none']) {
      const res = await call('get', member, { unified_cost_id: id });
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('ERROR_NOT_FOUND');
      expect((await call('get', owner, { unified_cost_id: id })).status).toBe(200);
    }
    // A query filter only narrows what the member already reads.
    const filtered = await call('list', member, { query: { filter: [{ k: 'project_id', v: ['A', 'B'], o: 'in' }] } });
    expect(filtered.body.total_count).toBe(2);
  });

  it('filter_or, keyword, stat distinct and analyze with filter_or never widen a member\'s scope (docs/security.md, API1)', async () => {
    const listed = async (query: object) => {
      const res = await call('list', member, { query });
      expect(res.status).toBe(200);
      return res.body.results.map((r: { unified_cost_id: string }) => r.unified_cost_id).sort();
    };
    expect(await listed({ filter_or: [{ k: 'project_id', v: 'B', o: 'eq' }, { k: 'unified_cost_id', v: 'uc-a1', o: 'eq' }] })).toEqual(['uc-a1']);
    expect(await listed({ filter_or: [{ k: 'project_id', v: ['B', ''], o: 'in' }] })).toEqual([]);
    expect(await listed({ keyword: 'uc-b1' })).toEqual([]);
    const distinct = await call('stat', member, { query: { distinct: 'project_id' } });
    expect(distinct.body.results).toEqual(['A']);
    const analyzed = await call('analyze', member, {
      query: { granularity: 'MONTHLY', start: '2024-03', end: '2024-03', group_by: ['project_id'], fields: { usd: { key: 'cost.USD', operator: 'sum' } }, filter_or: [{ k: 'project_id', v: 'B', o: 'eq' }, { k: 'project_id', v: 'A', o: 'eq' }] },
      is_confirmed: true,
    });
    expect(analyzed.body.results.map((r: { project_id: string; usd: number }) => [r.project_id, r.usd])).toEqual([['A', 15]]);
  });

  it('a removal from the ancestor group takes effect on the next request', async () => {
    await t.directory.publish('dm', dir([]));
    expect(await ids(member)).toEqual([]);
    expect(await total(member)).toBe(0);
    expect((await call('get', member, { unified_cost_id: 'uc-a1' })).status).toBe(404);
    expect(await ids(owner)).toHaveLength(4);
    await t.directory.publish('dm', dir(['member']));
    expect(await ids(member)).toEqual(['uc-a1', 'uc-a2']);
  });
});
