import { serveCostDataSource, type PluginServer } from '@platform/plugin-kit';
import { waitFor } from '@platform/testing';
import { call, startPlatform, type Platform } from './platform';

/**
 * A cost data source served by a published plugin, end to end through the gateway with the production
 * builds of the plugin module and cost-analysis (only those two are started): a TypeScript plugin
 * (libs/plugin-kit) is published by a supervisor, a data source registered on it (init's metadata
 * stored, verify given the secret), synced (get_tasks, get_data into the COPY path), and the unified
 * costs answer its exact sums. The secret appears in no process's log and no answer.
 */
jest.setTimeout(300_000);

const SECRET = 'e2e-plugin-api-key-5b1d9e';
const ROWS = 3000;
const cost = (i: number) => (i % 40) / 8;
const EXPECTED: Record<string, number> = {};
for (let i = 0; i < ROWS; i++) EXPECTED[`2024-0${(i % 3) + 1}`] = (EXPECTED[`2024-0${(i % 3) + 1}`] ?? 0) + cost(i);

describe('a cost data source served by a published plugin, end to end', () => {
  let p: Platform;
  let plugin: PluginServer;
  let admin: string;
  const answers: string[] = [];
  const secretsSeen: unknown[] = [];

  beforeAll(async () => {
    p = await startPlatform({ LOG_LEVEL: 'info' }, { apps: ['plugin', 'cost-analysis'] });
    plugin = await serveCostDataSource({
      init: () => ({ metadata: { currency: 'USD', data_source_rules: [] } }),
      verify: (req) => void secretsSeen.push(req.secret_data.api_key),
      getTasks: () => ({ tasks: ['2024-01', '2024-02', '2024-03'].map((month) => ({ task_options: { month } })), synced_accounts: [{ account_id: '123456789012' }] }),
      getData: function* (req) {
        const month = Number(String(req.task_options.month).slice(5));
        const results = [];
        for (let i = month - 1; i < ROWS; i += 3) {
          results.push({ cost: cost(i), usage_quantity: 1, provider: 'aws', product: `p-${i % 4}`, billed_date: `${String(req.task_options.month)}-${String((i % 28) + 1).padStart(2, '0')}` });
          if (results.length === 200) yield { results: results.splice(0) };
        }
        if (results.length) yield { results };
      },
    });
    admin = await p.mintToken({ domainId: 'domain-plugin-e2e', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(async () => {
    await plugin?.stop(100);
    await p?.stop();
  });

  const post = async (path: string, body: unknown) => {
    const res = await call(p.base, path, body, admin);
    answers.push(JSON.stringify(res.body));
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  it('publish → register → sync → unified cost', async () => {
    await post('/plugin/v1/supervisor/publish', {
      name: 'e2e-cost',
      hostname: 'e2e-cost-host',
      secret_key: 'e2e-cost-supervisor-secret',
      plugin_info: [{ plugin_id: 'plugin-e2e-cost', version: '1.0.0', state: 'ACTIVE', endpoint: plugin.endpoint }],
    });
    const ds = await post('/cost-analysis/v1/data-source/register', {
      name: 'e2e plugin',
      resource_group: 'DOMAIN',
      plugin_info: { plugin_id: 'plugin-e2e-cost', options: {}, secret_data: { api_key: SECRET } },
    });
    expect(ds.plugin_info).toMatchObject({ plugin_id: 'plugin-e2e-cost', version: '1.0.0', metadata: { currency: 'USD' } });
    expect(secretsSeen).toEqual([SECRET]);

    const job = await post('/cost-analysis/v1/data-source/sync', { data_source_id: ds.data_source_id });
    const done = await waitFor(async () => {
      const j = await post('/cost-analysis/v1/job/get', { job_id: job.job_id });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 120_000, 'the job to end', 250);
    expect(done).toMatchObject({ status: 'SUCCESS', total_tasks: 3, synced_accounts: [{ account_id: '123456789012' }] });

    const res = await post('/cost-analysis/v1/unified-cost/analyze', {
      query: { granularity: 'MONTHLY', start: '2024-01', end: '2024-03', fields: { cost: { key: 'cost.USD', operator: 'sum' } }, sort: [{ key: 'date' }] },
    });
    const got = Object.fromEntries(res.results.map((r: { date: string; cost: number }) => [r.date, r.cost]));
    expect(Object.keys(got).sort()).toEqual(Object.keys(EXPECTED).sort());
    for (const [m, v] of Object.entries(EXPECTED)) expect(Math.abs(got[m] - v)).toBeLessThan(1e-6 * v);

    expect(answers.filter((a) => a.includes(SECRET))).toEqual([]);
    expect(p.logs()).not.toContain(SECRET);
  });
});
