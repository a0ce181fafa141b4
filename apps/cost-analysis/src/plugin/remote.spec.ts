import { Writable } from 'node:stream';
import { createServer } from 'node:net';
import request from 'supertest';
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { createLogger } from '@platform/core';
import { compareVersions, DEFAULT_PLUGIN_CLIENT_CONFIG, PACKAGES, PluginClients, PluginEndpointResolver, tableSource, type CostAnalysis } from '@platform/plugin';
import { fail, serveCostDataSource, type PluginServer } from '@platform/plugin-kit';
import { bearer, createTempDatabase, createTestRedis, waitFor, type TempDatabase } from '@platform/testing';
import { loadConfig } from '../config';
import { createTestCostAnalysis } from '../test-support';
import { HTTP_FILE_PLUGIN_ID } from './http-file';
import { publishPlugins } from './test-publish';

/**
 * Cost data sources served by published plugins (docs/decisions/plugins.md "Cost data sources"): test
 * plugins written with libs/plugin-kit, published in the plugin module's table (its migrations) and
 * resolved through the real resolver, driven through the real app and collection worker.
 */
jest.setTimeout(120_000);

const SECRET = 'sk-LEAK-7f3a9c21e5';
const MONTHS = ['2024-01', '2024-02'];
const ROWS_PER_MONTH = 250;
const PAGE = 100;

function rows(month: string, factor: number): CostAnalysis.CostInfoInput[] {
  return Array.from({ length: ROWS_PER_MONTH }, (_, i) => ({
    cost: (i % 7) * 0.25 * factor,
    usage_quantity: 1,
    provider: 'aws',
    region_code: 'us-east-1',
    product: i % 2 ? 'AmazonEC2' : 'AmazonS3',
    usage_type: 'BoxUsage',
    tags: { team: i % 3 ? 'payments' : 'search' },
    additional_info: { line: i },
    billed_date: `${month}-${String((i % 28) + 1).padStart(2, '0')}`,
  }));
}
const expectedMonth = (factor: number) => rows('2024-01', factor).reduce((s, r) => s + (r.cost ?? 0), 0);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const aborted = (signal: AbortSignal) => new Promise<void>((r) => (signal.aborted ? r() : signal.addEventListener('abort', () => r(), { once: true })));

/**
 * A plugin as upstream's: metadata from init, one task per month, pages of CostsInfo. `options.mode`
 * chooses a misbehaviour: refuse-verify and refuse-data quote the secret in their error text (as
 * upstream plugins often do), hang stops sending mid-stream, endless never ends, big sends a message
 * past the client's bound, die kills its own process mid-stream.
 */
async function costPlugin(release: string, factor: number, seen: { secrets: unknown[] } = { secrets: [] }): Promise<PluginServer> {
  const self: { server?: PluginServer } = {};
  const server = await serveCostDataSource({
    init: (req) => ({ metadata: { currency: String(req.options.currency ?? 'USD'), release, mode: String(req.options.mode ?? '') } }),
    verify: (req) => {
      seen.secrets.push(req.secret_data.api_key);
      if (req.options.mode === 'refuse-verify') throw fail.authenticateFailure(`the key ${String(req.secret_data.api_key)} was refused`);
    },
    getTasks: async (req) => {
      if (req.options.mode === 'slow-tasks') await sleep(5000);
      return {
        tasks: MONTHS.map((month) => ({ task_options: { month } })),
        changed: [],
        synced_accounts: [{ account_id: '111122223333', name: 'payments' }, { account_id: '444455556666', name: 'search' }],
      };
    },
    getData: async function* (req, ctx) {
      const mode = req.options.mode;
      if (mode === 'refuse-data') throw fail.invalidArgument(`Request failed with key ${String(req.secret_data.api_key)}`);
      const all = rows(String(req.task_options.month), factor);
      for (let i = 0; i < all.length; i += PAGE) {
        if (i > 0 && mode === 'die') self.server!.kill();
        if (i > 0 && mode === 'hang') await aborted(ctx.signal);
        if (mode === 'big') yield { results: [{ ...all[0], tags: { blob: 'x'.repeat(2 * 1024 * 1024) } }] };
        yield { results: all.slice(i, i + PAGE) };
      }
      if (mode === 'endless') for (;;) {
        await sleep(2);
        yield { results: [] };
      }
    },
  });
  self.server = server;
  return server;
}

/** A plugin whose get_data answers bytes that are not a CostsInfo (a length past the end). */
async function garbagePlugin(): Promise<{ endpoint: string; stop(): void }> {
  const server = new Server();
  const id = (b: Buffer) => b;
  const method = (service: string, name: string, responseStream: boolean) => ({
    path: `/${PACKAGES.costAnalysis}.${service}/${name}`,
    requestStream: false,
    responseStream,
    requestSerialize: id,
    requestDeserialize: id,
    responseSerialize: id,
    responseDeserialize: id,
  });
  const empty = (_: unknown, cb: (e: null, b: Buffer) => void) => cb(null, Buffer.alloc(0));
  server.addService({ init: method('DataSource', 'init', false), verify: method('DataSource', 'verify', false) } as ServiceDefinition, { init: empty, verify: empty });
  // TasksInfo { tasks: [TaskInfo {}] }
  server.addService({ get_tasks: method('Job', 'get_tasks', false) } as ServiceDefinition, { get_tasks: (_: unknown, cb: (e: null, b: Buffer) => void) => cb(null, Buffer.from([0x0a, 0x00])) });
  server.addService({ get_data: method('Cost', 'get_data', true) } as ServiceDefinition, {
    get_data: (call: { write(b: Buffer): void; end(): void }) => {
      call.write(Buffer.from([0x0a, 0x40, 0x01]));
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))));
  return { endpoint: `grpc://127.0.0.1:${port}`, stop: () => server.forceShutdown() };
}

async function deadEndpoint(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `grpc://127.0.0.1:${port}`;
}

describe('cost data sources served by published gRPC plugins', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let pdb: TempDatabase;
  const r = createTestRedis('cost-plugins');
  let resolver: PluginEndpointResolver;
  const clients = new PluginClients({
    ...DEFAULT_PLUGIN_CLIENT_CONFIG,
    timeouts: { ...DEFAULT_PLUGIN_CLIENT_CONFIG.timeouts, init: 3000, verify: 3000, getTasks: 1500 },
    stream: { ...DEFAULT_PLUGIN_CLIENT_CONFIG.stream, idleMs: 1500 },
    maxReceiveBytes: 1024 * 1024,
    retryAttempts: 2,
    retryBaseMs: 20,
    retryMaxMs: 50,
  });
  const servers: { stop(): unknown }[] = [];
  const log: string[] = [];
  const answers: string[] = [];
  const seen = { secrets: [] as unknown[] };
  let admin: string;
  let v1: PluginServer;
  let v2: PluginServer;

  /** Publishes, then waits until the resolver answers the newest version (its announcement arrived). */
  const publish = async (plugins: { plugin_id: string; version: string; endpoint: string }[], hostname = 'host-a') => {
    await publishPlugins(pdb.pool, r.redis, r.prefix, 'd1', hostname, plugins);
    for (const p of plugins) {
      const newest = plugins.filter((x) => x.plugin_id === p.plugin_id).sort((a, b) => compareVersions(b.version, a.version))[0];
      await waitFor(async () => {
        const got = await resolver.resolve({ domainId: 'd1', pluginId: p.plugin_id, version: '', upgradeMode: 'AUTO' }).catch(() => undefined);
        return got?.updated_version === newest.version && got.endpoint === newest.endpoint;
      }, 5000, `${p.plugin_id} ${newest.version} resolved`, 10);
    }
  };
  const call = async (path: string, body: object) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', admin).send(body);
    answers.push(res.text);
    return res;
  };
  const ok = async (path: string, body: object) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const register = (name: string, plugin_id: string, extra: object = {}, options: object = {}) =>
    call('data-source/register', { name, resource_group: 'DOMAIN', plugin_info: { plugin_id, options, secret_data: { api_key: SECRET }, ...extra } });
  const finished = (jobId: string) =>
    waitFor(async () => {
      const j = await ok('job/get', { job_id: jobId });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 60_000, `job ${jobId} to end`);
  const sync = async (id: string) => finished((await ok('data-source/sync', { data_source_id: id })).job_id);
  const monthSums = async (dsId: string) => {
    const { rows: sums } = await t.db.pool.query(
      `SELECT billed_month, sum(cost)::float8 AS cost, count(*)::int AS n FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.domain_id = 'd1' AND t.data_source_id = $1 GROUP BY 1 ORDER BY 1`,
      [dsId],
    );
    return sums;
  };
  const unifiedSums = async () => {
    const res = await ok('unified-cost/list', { query: { page: { limit: 1000 } } });
    const got: Record<string, number> = {};
    for (const u of res.results) got[u.billed_month] = (got[u.billed_month] ?? 0) + u.cost.USD;
    return got;
  };
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));

  beforeAll(async () => {
    pdb = await createTempDatabase({ app: 'plugin' });
    resolver = new PluginEndpointResolver(r.redis, tableSource(pdb.pool), { prefix: r.prefix });
    await resolver.start();
    const sink = new Writable({ write: (c, _e, cb) => (log.push(String(c)), cb()) });
    const base = loadConfig();
    t = await createTestCostAnalysis(
      { limits: { ...base.limits, taskTimeoutMs: 8000 } },
      { remote: { resolver, clients }, logger: createLogger('cost-analysis', 'debug', sink) },
    );
    t.startWorker({ sweepMs: 500 });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    v1 = await costPlugin('1', 1, seen);
    v2 = await costPlugin('2', 2, seen);
    servers.push(v1, v2);
  });
  afterAll(async () => {
    for (const s of servers) await Promise.resolve(s.stop()).catch(() => {});
    resolver?.stop();
    clients.close();
    await t?.close();
    await r.cleanup();
    r.redis.disconnect();
    await pdb?.drop();
  });

  it('register calls init (metadata stored and answered) and verify with the secret; sync collects into unified costs; re-sync does not double', async () => {
    await publish([{ plugin_id: 'plugin-test-cost', version: '1.0.0', endpoint: v1.endpoint }]);
    const res = await register('remote-a', 'plugin-test-cost');
    expect(res.status).toBe(200);
    expect(res.body.plugin_info).toMatchObject({ plugin_id: 'plugin-test-cost', version: '1.0.0', metadata: { currency: 'USD', release: '1' }, upgrade_mode: 'AUTO' });
    expect(res.body.plugin_info.secret_data).toBeUndefined();
    expect(seen.secrets).toContain(SECRET);
    const dsId = res.body.data_source_id;
    const verified = seen.secrets.length;
    await ok('data-source/verify-plugin', { data_source_id: dsId });
    expect(seen.secrets.slice(verified)).toEqual([SECRET]); // the stored secret, opened for the plugin
    expect((await ok('data-source/get', { data_source_id: dsId })).plugin_info.metadata).toEqual({ currency: 'USD', release: '1', mode: '' });

    const job = await sync(dsId);
    expect(job).toMatchObject({ status: 'SUCCESS', total_tasks: 2, synced_accounts: [{ account_id: '111122223333' }, { account_id: '444455556666' }] });
    const sums = await monthSums(dsId);
    expect(sums.map((s) => [s.billed_month, s.n])).toEqual(MONTHS.map((m) => [m, ROWS_PER_MONTH]));
    for (const s of sums) expect(close(s.cost, expectedMonth(1))).toBe(true);
    const unified = await unifiedSums();
    for (const m of MONTHS) expect(close(unified[m], expectedMonth(1))).toBe(true);

    await sync(dsId);
    expect((await monthSums(dsId)).map((s) => s.n)).toEqual([ROWS_PER_MONTH, ROWS_PER_MONTH]);
    const again = await unifiedSums();
    for (const m of MONTHS) expect(close(again[m], expectedMonth(1))).toBe(true);
    await ok('data-source/deregister', { data_source_id: dsId });
  });

  it('AUTO moves the data source to the newest published version at the next sync; MANUAL stays', async () => {
    await publish([{ plugin_id: 'plugin-up', version: '1.0.0', endpoint: v1.endpoint }]);
    const auto = (await register('auto', 'plugin-up')).body;
    const manual = (await register('manual', 'plugin-up', { version: '1.0.0', upgrade_mode: 'MANUAL' })).body;
    expect([auto.plugin_info.version, manual.plugin_info.version]).toEqual(['1.0.0', '1.0.0']);
    await publish([
      { plugin_id: 'plugin-up', version: '1.0.0', endpoint: v1.endpoint },
      { plugin_id: 'plugin-up', version: '1.1.0', endpoint: v2.endpoint },
    ]);
    expect((await ok('data-source/get', { data_source_id: auto.data_source_id })).plugin_info.version).toBe('1.0.0'); // not before the sync
    expect((await sync(auto.data_source_id)).status).toBe('SUCCESS');
    const upgraded = await ok('data-source/get', { data_source_id: auto.data_source_id });
    expect(upgraded.plugin_info).toMatchObject({ version: '1.1.0', metadata: { release: '2' } });
    for (const s of await monthSums(auto.data_source_id)) expect(close(s.cost, expectedMonth(2))).toBe(true);

    expect((await sync(manual.data_source_id)).status).toBe('SUCCESS');
    expect((await ok('data-source/get', { data_source_id: manual.data_source_id })).plugin_info).toMatchObject({ version: '1.0.0', metadata: { release: '1' } });
    for (const s of await monthSums(manual.data_source_id)) expect(close(s.cost, expectedMonth(1))).toBe(true);
    for (const id of [auto.data_source_id, manual.data_source_id]) await ok('data-source/deregister', { data_source_id: id });
  });

  it('upgrade_mode as upstream reads it: NONE (not set) follows the newest, as AUTO; MANUAL without a version is a 400 before anything is resolved', async () => {
    await publish([{ plugin_id: 'plugin-none', version: '1.0.0', endpoint: v1.endpoint }]);
    const none = (await register('none', 'plugin-none', { version: '1.0.0' })).body;
    await t.db.pool.query(`UPDATE data_source SET plugin_info = plugin_info || '{"upgrade_mode": "NONE"}'::jsonb WHERE domain_id = 'd1' AND data_source_id = $1`, [none.data_source_id]);
    await publish([
      { plugin_id: 'plugin-none', version: '1.0.0', endpoint: v1.endpoint },
      { plugin_id: 'plugin-none', version: '1.1.0', endpoint: v2.endpoint },
    ]);
    expect((await sync(none.data_source_id)).status).toBe('SUCCESS');
    expect((await ok('data-source/get', { data_source_id: none.data_source_id })).plugin_info).toMatchObject({ version: '1.1.0', upgrade_mode: 'NONE', metadata: { release: '2' } });
    const refused = await register('manual-no-version', 'plugin-none', { upgrade_mode: 'MANUAL' });
    expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([400, 'ERROR_REQUIRED_PARAMETER', expect.stringContaining('plugin_info.version')]);
    await ok('data-source/deregister', { data_source_id: none.data_source_id });
  });

  it("a version published under a built-in's id serves instead of the built-in; nothing published: the built-in", async () => {
    expect((await t.deps.plugins.choose('d1', { plugin_id: HTTP_FILE_PLUGIN_ID })).remote).toBe(false);
    await publish([{ plugin_id: HTTP_FILE_PLUGIN_ID, version: '2.0.0', endpoint: v1.endpoint }], 'host-b');
    // the resolver's cache ("nothing published") is dropped when the announcement arrives
    const chosen = await waitFor(async () => {
      const c = await t.deps.plugins.choose('d1', { plugin_id: HTTP_FILE_PLUGIN_ID });
      return c.remote ? c : undefined;
    }, 5000, 'the published version');
    expect(chosen.version).toBe('2.0.0');
    expect((await t.deps.plugins.choose('d2', { plugin_id: HTTP_FILE_PLUGIN_ID })).remote).toBe(false);
    await publish([], 'host-b');
    await waitFor(async () => !(await t.deps.plugins.choose('d1', { plugin_id: HTTP_FILE_PLUGIN_ID })).remote, 5000, 'the built-in again');
  });

  it("a plugin's own refusal is our envelope with its code and a 4xx, its text without the secret", async () => {
    await publish([{ plugin_id: 'plugin-test-cost', version: '1.0.0', endpoint: v1.endpoint }]);
    const res = await register('refused', 'plugin-test-cost', {}, { mode: 'refuse-verify' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    expect(res.body.error.message).toContain('was refused');
    expect(res.text).not.toContain(SECRET);
    expect((await ok('data-source/list', { name: 'refused' })).total_count).toBe(0);
  });

  it('a plugin that is down or too slow answers 503 ERROR_PLUGIN_UNAVAILABLE, never a 500', async () => {
    await publish([{ plugin_id: 'plugin-down', version: '1.0.0', endpoint: await deadEndpoint() }]);
    const down = await register('down', 'plugin-down');
    expect([down.status, down.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    // a registered data source whose plugin went away: verify-plugin answers the same 503
    const gone = await costPlugin('1', 1, seen);
    await publish([{ plugin_id: 'plugin-gone', version: '1.0.0', endpoint: gone.endpoint }]);
    const goneDs = (await register('gone', 'plugin-gone')).body;
    await gone.stop(0);
    const verify = await call('data-source/verify-plugin', { data_source_id: goneDs.data_source_id });
    expect([verify.status, verify.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    await ok('data-source/deregister', { data_source_id: goneDs.data_source_id });

    await publish([{ plugin_id: 'plugin-test-cost', version: '1.0.0', endpoint: v1.endpoint }]);
    const slow = (await register('slow', 'plugin-test-cost', {}, { mode: 'slow-tasks' })).body;
    const res = await call('data-source/sync', { data_source_id: slow.data_source_id });
    expect([res.status, res.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
    await ok('data-source/deregister', { data_source_id: slow.data_source_id });
  });

  const failing: [string, string, string][] = [
    ['refuses get_data (quoting the secret)', 'refuse-data', 'ERROR_INVALID_ARGUMENT'],
    ['stops sending mid-stream', 'hang', 'ERROR_PLUGIN_UNAVAILABLE'],
    ['never ends its stream', 'endless', 'ERROR_TASK_TIMEOUT'],
    ['sends a message past the bound', 'big', 'ERROR_PLUGIN_RESPONSE_TOO_LARGE'],
  ];
  it.each(failing)('a plugin that %s: the job and its tasks end in FAILURE with the reason, nothing written', async (_what, mode, code) => {
    await publish([{ plugin_id: 'plugin-test-cost', version: '1.0.0', endpoint: v1.endpoint }]);
    const ds = (await register(`failing-${mode}`, 'plugin-test-cost', {}, { mode })).body;
    const job = await sync(ds.data_source_id);
    expect([job.status, job.error_code]).toEqual(['FAILURE', 'ERROR_JOB_TASK']);
    const tasks = (await ok('job-task/list', { job_id: job.job_id })).results;
    const failed = tasks.find((x: { status: string; error_code: string }) => x.status === 'FAILURE' && x.error_code === code);
    expect(failed).toBeDefined();
    // the plugin's text is kept, its quote of the secret is not
    if (mode === 'refuse-data') expect(failed.error_message).toContain('Request failed with key ***');
    expect(await monthSums(ds.data_source_id)).toEqual([]);
    await ok('data-source/deregister', { data_source_id: ds.data_source_id });
  });

  it("a plugin's currency that is an Object.prototype name has no rate: the rows are bad, nothing is stored", async () => {
    // The rates are a plain object: `in` would have taken `constructor` or `__proto__` for a currency with a rate.
    await publish([{ plugin_id: 'plugin-test-cost', version: '1.0.0', endpoint: v1.endpoint }]);
    for (const currency of ['constructor', '__proto__']) {
      const res = await register(`proto-${currency}`, 'plugin-test-cost', {}, { currency });
      expect(res.status).toBe(200);
      expect(res.body.plugin_info.metadata.currency).toBe(currency);
      const job = await sync(res.body.data_source_id);
      expect(job.status).toBe('FAILURE');
      const tasks = (await ok('job-task/list', { job_id: job.job_id })).results as { error_code: string; error_message: string }[];
      expect(tasks.map((x) => x.error_code)).toContain('ERROR_INVALID_COST_DATA');
      expect(tasks.find((x) => x.error_code === 'ERROR_INVALID_COST_DATA')!.error_message).toContain('currency has no exchange rate');
      expect(await monthSums(res.body.data_source_id)).toEqual([]);
      await ok('data-source/deregister', { data_source_id: res.body.data_source_id });
    }
  });

  it('a plugin that answers garbage: FAILURE with ERROR_PLUGIN_INVALID_RESPONSE', async () => {
    const g = await garbagePlugin();
    servers.push(g);
    await publish([{ plugin_id: 'plugin-garbage', version: '1.0.0', endpoint: g.endpoint }]);
    const ds = (await register('garbage', 'plugin-garbage')).body;
    const job = await sync(ds.data_source_id);
    expect(job.status).toBe('FAILURE');
    const tasks = (await ok('job-task/list', { job_id: job.job_id })).results;
    expect(tasks.map((x: { error_code: string }) => x.error_code)).toEqual(['ERROR_PLUGIN_INVALID_RESPONSE']);
  });

  it('a plugin that dies mid-stream: FAILURE after the retries, nothing half-written; the worker goes on', async () => {
    const dying = await costPlugin('1', 1, seen);
    servers.push(dying);
    await publish([{ plugin_id: 'plugin-dying', version: '1.0.0', endpoint: dying.endpoint }]);
    const ds = (await register('dying', 'plugin-dying', {}, { mode: 'die' })).body;
    const job = await sync(ds.data_source_id);
    expect([job.status, job.error_code]).toEqual(['FAILURE', 'ERROR_JOB_TASK']);
    const tasks = (await ok('job-task/list', { job_id: job.job_id })).results;
    expect(tasks.some((x: { error_code: string }) => x.error_code === 'ERROR_PLUGIN_UNAVAILABLE')).toBe(true);
    expect(await monthSums(ds.data_source_id)).toEqual([]);
    // the same worker collects the next data source
    await publish([{ plugin_id: 'plugin-test-cost', version: '1.0.0', endpoint: v1.endpoint }]);
    const next = (await register('after-death', 'plugin-test-cost')).body;
    expect((await sync(next.data_source_id)).status).toBe('SUCCESS');
  });

  it('LOCAL and WAREHOUSE answer secret_type empty; update with template is refused for EXTERNAL', async () => {
    const local = await ok('data-source/register', { name: 'local', data_source_type: 'LOCAL', resource_group: 'DOMAIN', template: { a: 1 } });
    const wh = await ok('data-source/register', { name: 'wh', data_source_type: 'WAREHOUSE', resource_group: 'DOMAIN', warehouse_info: { type: 'DATABRICKS' } });
    expect([local.secret_type, wh.secret_type]).toEqual(['', '']);
    expect((await ok('data-source/update', { data_source_id: local.data_source_id, template: { b: 2 } })).template).toEqual({ b: 2 });
    const ext = (await ok('data-source/list', { name: 'after-death' })).results[0];
    expect(ext.secret_type).toBe('MANUAL');
    const res = await call('data-source/update', { data_source_id: ext.data_source_id, template: { b: 2 } });
    expect([res.status, res.body.error.code]).toEqual([400, 'ERROR_NOT_ALLOW_PLUGIN_SETTINGS']);
  });

  it('the secret never reached a log line or an answer', () => {
    expect(log.length).toBeGreaterThan(0);
    expect(log.join('').includes('was refused') || log.join('').includes('job task')).toBe(true);
    expect(log.some((l) => l.includes('Request failed with key ***'))).toBe(true); // the failure was logged, redacted
    expect(log.filter((l) => l.includes(SECRET))).toEqual([]);
    expect(answers.filter((a) => a.includes(SECRET))).toEqual([]);
    expect(seen.secrets.filter((s) => s === SECRET).length).toBeGreaterThan(0);
  });
});
