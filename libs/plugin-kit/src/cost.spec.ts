import { DEFAULT_PLUGIN_CLIENT_CONFIG, PluginClients, type CostAnalysis, type PluginClientConfig } from '@platform/plugin';
import { isApiError } from '@platform/errors';
import { fail, serveCostDataSource, type PluginServer } from './index';

/**
 * Every cost data source call through the client against a plugin written with the kit, and the
 * get_data stream's back-pressure: a slow consumer holds the plugin back (it produces only as far
 * as gRPC's flow-control windows let it ahead), so memory stays flat at any length.
 */
const config = (o: Partial<PluginClientConfig> = {}): PluginClientConfig => ({ ...DEFAULT_PLUGIN_CLIENT_CONFIG, ...o });

function row(i: number): CostAnalysis.CostInfoInput {
  return {
    cost: i * 0.5,
    usage_quantity: 1,
    usage_unit: 'Hrs',
    provider: 'aws',
    region_code: 'us-east-1',
    product: 'AmazonEC2',
    usage_type: 'BoxUsage',
    resource: `i-${i}`,
    tags: { team: 'payments', n: i, nested: { list: [1, 'two', null, { three: true }] } },
    additional_info: { line: i },
    data: {},
    billed_date: '2024-01-15',
  };
}

describe('cost data source plugin: client ↔ kit', () => {
  let server: PluginServer;
  const seen: { init?: unknown; tasks?: unknown; data?: unknown } = {};
  const clients = new PluginClients(config());

  beforeAll(async () => {
    server = await serveCostDataSource({
      init: (req) => {
        seen.init = req;
        if (Object.keys(req.options).length === 0) throw fail.requiredParameter('options');
        return { metadata: { data_source_rules: [], currency: 'USD', supported_secret_types: ['MANUAL'] } };
      },
      verify: (req) => {
        if (req.secret_data.token !== 'good') throw fail.authenticateFailure('bad token');
      },
      getTasks: (req) => {
        seen.tasks = req;
        return {
          tasks: [{ task_options: { base_url: 'a' }, task_changed: { start: '2024-01', filter: { account: '1' } } }, { task_options: { base_url: 'b' } }],
          changed: [{ start: '1900-01' }],
          synced_accounts: [{ account_id: '111', name: 'payments' }],
        };
      },
      getLinkedAccounts: () => ({ results: [{ account_id: '111', name: 'payments' }] }),
      getData: async function* (req) {
        seen.data = req;
        const pages = Number(req.task_options.pages ?? 3);
        for (let p = 0; p < pages; p++) yield { results: [row(p * 2), row(p * 2 + 1)] };
      },
    });
  });
  afterAll(async () => {
    clients.close();
    await server.stop();
  });

  it('DataSource.init sends options and domain_id and answers the metadata', async () => {
    const info = await clients.cost(server.endpoint).dataSource.init({ options: { base_url: ['http://x/a.csv'] }, domain_id: 'domain-1' });
    expect(info).toEqual({ metadata: { data_source_rules: [], currency: 'USD', supported_secret_types: ['MANUAL'] } });
    expect(seen.init).toEqual({ options: { base_url: ['http://x/a.csv'] }, domain_id: 'domain-1' });
  });

  it("a plugin's refusal (INVALID_ARGUMENT ERROR_REQUIRED_PARAMETER) is a 400 envelope with that code", async () => {
    const e = await clients.cost(server.endpoint).dataSource.init({ domain_id: 'domain-1' }).catch((err) => err);
    expect(isApiError(e)).toBe(true);
    expect(e.toEnvelope()).toEqual({ error: { code: 'ERROR_REQUIRED_PARAMETER', message: 'DataSource.init: Required parameter. (key = options)', status: 400 } });
    expect(e.details).toMatchObject({ grpcStatus: 'INVALID_ARGUMENT', retryable: false });
  });

  it('DataSource.verify resolves, or refuses the credentials as a 400 (never a 401)', async () => {
    const c = clients.cost(server.endpoint);
    await expect(c.dataSource.verify({ options: {}, secret_data: { token: 'good' } })).resolves.toBeUndefined();
    const e = await c.dataSource.verify({ options: {}, secret_data: { token: 'wrong' } }).catch((err) => err);
    expect([e.status, e.code]).toEqual([400, 'ERROR_AUTHENTICATE_FAILURE']);
  });

  it('Job.get_tasks carries tasks, changed and synced_accounts', async () => {
    const r = await clients.cost(server.endpoint).job.getTasks({
      options: { a: 1 },
      secret_data: { k: 'v' },
      start: '2024-01',
      last_synchronized_at: '2024-02-01T00:00:00Z',
      domain_id: 'domain-1',
      linked_accounts: [{ account_id: '111' }],
    });
    expect(r).toEqual({
      tasks: [
        { task_options: { base_url: 'a' }, task_changed: { start: '2024-01', end: '', filter: { account: '1' } } },
        { task_options: { base_url: 'b' } },
      ],
      changed: [{ start: '1900-01', end: '', filter: {} }],
      synced_accounts: [{ account_id: '111', name: 'payments' }],
    });
    expect(seen.tasks).toEqual({
      options: { a: 1 },
      secret_data: { k: 'v' },
      schema: '',
      start: '2024-01',
      last_synchronized_at: '2024-02-01T00:00:00Z',
      domain_id: 'domain-1',
      linked_accounts: [{ account_id: '111' }],
    });
  });

  it('Cost.get_linked_accounts answers the accounts', async () => {
    await expect(clients.cost(server.endpoint).cost.getLinkedAccounts({ options: {}, domain_id: 'd' })).resolves.toEqual({ results: [{ account_id: '111', name: 'payments' }] });
  });

  it('Cost.get_data streams every page in order, the rows as sent (Structs as plain JSON)', async () => {
    const pages: CostAnalysis.CostsInfo[] = [];
    for await (const page of clients.cost(server.endpoint).cost.getData({ options: {}, secret_data: {}, task_options: { pages: 4 }, domain_id: 'd' })) pages.push(page);
    expect(pages).toHaveLength(4);
    expect(pages.flatMap((p) => p.results.map((r) => r.resource))).toEqual(['i-0', 'i-1', 'i-2', 'i-3', 'i-4', 'i-5', 'i-6', 'i-7']);
    expect(pages[1].results[0]).toEqual({ ...row(2), data: {} });
    expect(seen.data).toMatchObject({ task_options: { pages: 4 } });
  });

  it('reuses one channel per endpoint', async () => {
    const c = clients.cost(server.endpoint);
    await Promise.all([c.dataSource.init({ options: { a: 1 } }), c.job.getTasks({}), clients.cost(server.endpoint).cost.getLinkedAccounts({})]);
    expect(clients.openChannels).toBe(1);
  });
});

describe('Cost.get_data back-pressure', () => {
  it('a slow consumer pauses the plugin: it runs ahead by a bounded number of messages, whatever the length', async () => {
    let produced = 0;
    let ended = false;
    const server = await serveCostDataSource({
      init: () => ({}),
      getTasks: () => ({}),
      getData: async function* () {
        try {
          for (let i = 0; i < 100_000; i++) {
            produced++;
            yield { results: Array.from({ length: 50 }, (_, j) => row(i * 50 + j)) };
          }
        } finally {
          ended = true;
        }
      },
    });
    const clients = new PluginClients(config());
    try {
      let consumed = 0;
      const ahead: number[] = [];
      for await (const page of clients.cost(server.endpoint).cost.getData({})) {
        expect(page.results).toHaveLength(50);
        consumed++;
        if (consumed % 10 === 0) {
          await new Promise((r) => setTimeout(r, 20)); // a slow consumer: the plugin has all the time to run ahead
          ahead.push(produced - consumed);
        }
        if (consumed === 300) break;
      }
      // ~20 KB a message: the windows of HTTP/2 and the stream buffers on both sides hold a few dozen,
      // far from the 100 000 the plugin would send if nothing held it back.
      expect(Math.max(...ahead)).toBeLessThan(200);
      expect(produced).toBeLessThan(300 + 200);
      // breaking out cancelled the call: the plugin's generator is ended (its finally runs) once the
      // cancel reaches it (a message or two in flight may still be produced meanwhile), then produces nothing
      for (let i = 0; i < 100 && !ended; i++) await new Promise((r) => setTimeout(r, 20));
      expect(ended).toBe(true);
      expect(produced).toBeLessThan(300 + 200);
      const stoppedAt = produced;
      await new Promise((r) => setTimeout(r, 100));
      expect(produced).toBe(stoppedAt);
    } finally {
      clients.close();
      await server.stop(100);
    }
  });
});
