import request from 'supertest';
import { bearer, waitFor } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from './test-support';

/**
 * Every operation as a client generated from upstream's protos (cloudforet-io/api 2.0.435,
 * cost_analysis/v1) sends it: every field of the request message present, unset ones at their proto3
 * defaults ("" / 0 / false / [] / {} / the enum's zero value); message fields left unset are omitted,
 * as proto3 JSON does. Exchange rates have no upstream proto: their fields are ours, sent the same way.
 */
const QUERY = { filter: [], filter_or: [], sort: [], page: { start: 0, limit: 0 }, minimal: false, count_only: false, only: [], keyword: '', lookup: [], add_fields: {} };
const STAT = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: { start: 0, limit: 0 }, distinct: '', keyword: '', ...over });
const TS_ANALYZE = (over: object) => ({
  granularity: 'GRANULARITY_NONE', start: '', end: '', group_by: [], field_group: [], filter: [], filter_or: [], page: { start: 0, limit: 0 }, sort: [], fields: {}, select: {}, keyword: '', lookup: [], add_fields: {}, ...over,
});
const CSV = ['cost,currency,usage_quantity,provider,region_code,product,account,project_id,year,month,day', '10,USD,3,aws,us-east-1,AmazonEC2,a1,p-1,2024,1,5', '5,USD,4.5,aws,us-east-1,AmazonEC2,a1,p-1,2024,1,6', '7,USD,1,aws,us-east-1,AmazonS3,a1,p-1,2024,2,1'].join('\n') + '\n';

jest.setTimeout(60_000);

describe('cost-analysis: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;
  let admin: string;
  let dsId = '';
  let canceledJob = '';
  let timedOutJob = '';
  let doneJob = '';
  beforeAll(async () => {
    t = await createTestCostAnalysis();
    files = await serveFiles({ '/c.csv': CSV });
    await t.directory.publish('d1', { projects: [{ project_id: 'p-1', workspace_id: 'ws-1', project_group_id: '', name: 'One' }], groups: [], workspaces: [{ workspace_id: 'ws-1', name: 'WS' }] });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });
  const call = (path: string, body: object, auth = owner) => request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', auth).send(body);
  const ok = async (path: string, body: object, auth = owner) => {
    const res = await call(path, body, auth);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const sync = () => ok('data-source/sync', { data_source_id: dsId, start: '', no_preload_cache: false });

  test('data-source/register: unset enums, strings, structs and plugin_info fields at their defaults', async () => {
    const ds = await ok('data-source/register', {
      name: 'csv',
      data_source_type: 'NONE',
      provider: '',
      secret_type: 'SECRET_TYPE_NONE',
      template: {},
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', version: '', options: { base_url: files.url('/c.csv') }, metadata: {}, secret_data: {}, schema_id: '', secret_id: '', upgrade_mode: 'NONE' },
      schedule: { state: 'NONE', hour: 0 }, // not set: upstream's default schedule
      tags: {},
      resource_group: 'WORKSPACE',
      workspace_id: '',
    });
    dsId = ds.data_source_id;
    expect(ds).toMatchObject({ name: 'csv', data_source_type: 'EXTERNAL', secret_type: 'MANUAL', resource_group: 'WORKSPACE', workspace_id: 'ws-1', plugin_info: { upgrade_mode: 'AUTO' }, schedule: { state: 'ENABLED', hour: 16, hours: [16] } });
    expect(ds.plugin_info.secret_id ?? '').toBe('');
    expect(ds.plugin_info.version).not.toBe('');
  });

  test("data-source/register and list in protobuf's JSON names (pluginInfo, dataSourceType, query.countOnly)", async () => {
    const ds = await ok('data-source/register', {
      name: 'camel',
      dataSourceType: 'EXTERNAL',
      pluginInfo: { pluginId: 'plugin-http-file-cost-datasource', options: { base_url: files.url('/c.csv') }, upgradeMode: 'MANUAL', version: '1.0.0' },
      resourceGroup: 'WORKSPACE',
      tags: { camelKey: 'kept' },
    });
    expect(ds).toMatchObject({ name: 'camel', data_source_type: 'EXTERNAL', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', version: '1.0.0', upgrade_mode: 'MANUAL', options: { base_url: files.url('/c.csv') } }, tags: { camelKey: 'kept' } });
    expect((await ok('data-source/list', { query: { countOnly: true }, dataSourceId: ds.data_source_id })).total_count).toBe(1);
    const both = await call('data-source/list', { data_source_id: ds.data_source_id, dataSourceId: ds.data_source_id });
    expect([both.status, both.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    await ok('data-source/deregister', { dataSourceId: ds.data_source_id });
  });

  test('data-source/update: "" name, {} tags and a schedule at its defaults leave them as they are', async () => {
    await ok('data-source/update', { data_source_id: dsId, name: 'renamed', template: {}, schedule: { state: 'DISABLED', hour: 3 }, tags: { team: 'fin' } });
    const ds = await ok('data-source/update', { data_source_id: dsId, name: '', template: {}, schedule: { state: 'NONE', hour: 0 }, tags: {} });
    expect(ds).toMatchObject({ name: 'renamed', tags: { team: 'fin' }, schedule: { state: 'DISABLED', hour: 3, hours: [3] } });
  });

  test('data-source/update-plugin, disable, enable, get, list, stat', async () => {
    expect(await ok('data-source/update-plugin', { data_source_id: dsId, version: '', options: {}, upgrade_mode: 'NONE' })).toMatchObject({ plugin_info: { options: { base_url: files.url('/c.csv') } } });
    expect((await ok('data-source/disable', { data_source_id: dsId })).state).toBe('DISABLED');
    expect((await ok('data-source/enable', { data_source_id: dsId })).state).toBe('ENABLED');
    expect((await ok('data-source/get', { data_source_id: dsId })).data_source_id).toBe(dsId);
    const list = await ok('data-source/list', { query: QUERY, data_source_id: '', name: '', data_source_type: 'TYPE_NONE', provider: '', connected_workspace_id: '', workspace_id: '' });
    expect(list.results.map((d: { data_source_id: string }) => d.data_source_id)).toEqual([dsId]);
    const refused = await call('data-source/list', { connected_workspace_id: 'ws-1' });
    expect([refused.status, refused.body.error.message]).toEqual([400, expect.stringContaining('not supported')]);
    expect((await ok('data-source/stat', { query: STAT({ distinct: 'name' }) })).results).toEqual(['renamed']);
  });

  test('data-source/sync and job/cancel (no worker yet: the job stays IN_PROGRESS)', async () => {
    canceledJob = (await sync()).job_id;
    expect((await ok('job/cancel', { job_id: canceledJob })).status).toBe('CANCELED');
  });

  test('a job past its timeout is TIMEOUT, and so are its unfinished tasks', async () => {
    timedOutJob = (await sync()).job_id;
    // the clock: the job is made two hours old, well past JOB_TIMEOUT_SECONDS
    await t.db.pool.query(`UPDATE job SET created_at = now() - interval '2 hours' WHERE job_id = $1`, [timedOutJob]);
    t.startWorker();
    doneJob = (await sync()).job_id;
    const job = await waitFor(async () => {
      const j = await ok('job/get', { job_id: doneJob });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 40_000);
    expect(job.status).toBe('SUCCESS');
    expect((await ok('job/get', { job_id: timedOutJob })).status).toBe('TIMEOUT');
  });

  test('job/get, job/list (Status SCOPE_NONE is not set), job/stat', async () => {
    const done = await ok('job/get', { job_id: doneJob });
    expect(done.changed).toEqual([
      { start: '2024-01', end: '2024-01' },
      { start: '2024-02', end: '2024-02' },
    ]);
    expect(done.synced_accounts).toEqual([]); // upstream's JobInfo field: no built-in plugin routes by account
    const all = await ok('job/list', { query: QUERY, job_id: '', status: 'SCOPE_NONE', workspace_id: '', data_source_id: '' });
    expect(all.total_count).toBe(3);
    const timedOut = await ok('job/list', { query: QUERY, job_id: '', status: 'TIMEOUT', workspace_id: '', data_source_id: dsId });
    expect(timedOut.results.map((j: { job_id: string }) => j.job_id)).toEqual([timedOutJob]);
    expect((await ok('job/stat', { query: STAT({ distinct: 'status' }) })).results.sort()).toEqual(['CANCELED', 'SUCCESS', 'TIMEOUT']);
  });

  test('job-task/list takes status TIMEOUT; job-task/get answers changed; job-task/stat', async () => {
    const base = { query: QUERY, job_task_id: '', status: 'SCOPE_NONE', workspace_id: '', job_id: '', data_source_id: '' };
    expect((await ok('job-task/list', base)).total_count).toBe(3);
    const timedOut = await ok('job-task/list', { ...base, status: 'TIMEOUT' });
    expect(timedOut.results).toEqual([expect.objectContaining({ job_id: timedOutJob, status: 'TIMEOUT', error_code: 'ERROR_JOB_TIMEOUT', changed: null })]);
    const done = await ok('job-task/list', { ...base, job_id: doneJob });
    const task = await ok('job-task/get', { job_task_id: done.results[0].job_task_id });
    expect(task).toMatchObject({ status: 'SUCCESS', created_count: 3, changed: { start: '2024-01', end: '2024-02' } });
    expect((await ok('job-task/stat', { query: STAT({ distinct: 'status' }) })).results.sort()).toEqual(['CANCELED', 'SUCCESS', 'TIMEOUT']);
  });

  test('unified-cost/analyze: is_confirmed false, as a proto3 client sends it (left out), is not a filter', async () => {
    const query = TS_ANALYZE({ granularity: 'MONTHLY', fields: { cost: { key: 'cost.USD', operator: 'sum' } }, sort: [{ key: 'date', desc: false }] });
    const want = [
      { date: '2024-01', cost: 15 },
      { date: '2024-02', cost: 7 },
    ];
    expect((await ok('unified-cost/analyze', { query, is_confirmed: false })).results).toEqual(want);
    expect((await ok('unified-cost/analyze', { query })).results).toEqual(want);
  });

  test('unified-cost/list, get, analyze (usage_quantity summed), stat', async () => {
    const list = await ok('unified-cost/list', { query: { ...QUERY, sort: [{ key: 'billed_month', desc: false }] }, unified_cost_id: '' });
    expect(list.results.map((u: { billed_month: string; product: string; usage_quantity: number }) => [u.billed_month, u.product, u.usage_quantity])).toEqual([
      ['2024-01', 'AmazonEC2', 7.5],
      ['2024-02', 'AmazonS3', 1],
    ]);
    expect((await ok('unified-cost/get', { unified_cost_id: list.results[0].unified_cost_id })).usage_quantity).toBe(7.5);
    const analyzed = await ok('unified-cost/analyze', {
      query: TS_ANALYZE({ granularity: 'MONTHLY', fields: { quantity: { key: 'usage_quantity', operator: 'sum' }, cost: { key: 'cost.USD', operator: 'sum' } }, sort: [{ key: 'date', desc: false }] }),
      is_confirmed: true, // 2024's months are confirmed
    });
    expect(analyzed.results).toEqual([
      { date: '2024-01', quantity: 7.5, cost: 15 },
      { date: '2024-02', quantity: 1, cost: 7 },
    ]);
    expect((await ok('unified-cost/stat', { query: STAT({ distinct: 'product' }) })).results.sort()).toEqual(['AmazonEC2', 'AmazonS3']);
  });

  test('exchange-rate/set, get, list, disable, enable, reset', async () => {
    const d = { domain_id: 'd1' };
    expect(await ok('exchange-rate/set', { ...d, currency: 'KRW', rate: 1300 }, admin)).toMatchObject({ currency: 'KRW', rate: 1300 });
    expect(await ok('exchange-rate/get', { ...d, currency: 'KRW' })).toMatchObject({ currency: 'KRW', rate: 1300 });
    expect((await ok('exchange-rate/list', d)).results).toEqual(expect.arrayContaining([expect.objectContaining({ currency: 'KRW', rate: 1300 })]));
    expect((await ok('exchange-rate/disable', { ...d, currency: 'KRW' }, admin)).state).toBe('DISABLED');
    expect((await ok('exchange-rate/enable', { ...d, currency: 'KRW' }, admin)).state).toBe('ENABLED');
    expect((await ok('exchange-rate/reset', { ...d, currency: 'KRW' }, admin)).rate).not.toBe(1300);
  });

  test('data-source/deregister: cascade_delete_cost false is upstream\'s default (true): the costs go too', async () => {
    await ok('data-source/deregister', { data_source_id: dsId, cascade_delete_cost: false });
    expect((await ok('unified-cost/list', { query: QUERY, unified_cost_id: '' })).total_count).toBe(0);
    expect((await call('data-source/get', { data_source_id: dsId })).status).toBe(404);
  });

  test('data-source/register WAREHOUSE: warehouse_info answered, plugin_info absent; {type: NONE} is REQUIRED', async () => {
    const base = { name: 'wh', provider: '', secret_type: 'SECRET_TYPE_NONE', template: {}, schedule: { state: 'NONE', hour: 0 }, tags: {}, resource_group: 'WORKSPACE', workspace_id: '' };
    const ds = await ok('data-source/register', { ...base, data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' } });
    expect(ds).toMatchObject({ data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' } });
    expect(ds).not.toHaveProperty('plugin_info');
    const unset = await call('data-source/register', { ...base, name: 'wh-2', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'NONE' } });
    expect([unset.status, unset.body.error.code, unset.body.error.message]).toEqual([400, 'ERROR_REQUIRED_PARAMETER', expect.stringContaining('warehouse_info.type')]);
    const sync = await call('data-source/sync', { data_source_id: ds.data_source_id, start: '', no_preload_cache: false });
    expect([sync.status, sync.body.error.code]).toEqual([400, 'ERROR_NOT_ALLOW_SYNC_COMMAND']);
    await ok('data-source/deregister', { data_source_id: ds.data_source_id, cascade_delete_cost: false });
  });

  test("data-source/register in protobuf's JSON names: warehouseInfo, a LOCAL one without pluginInfo, an EXTERNAL one without is REQUIRED", async () => {
    const wh = await ok('data-source/register', { name: 'wh-camel', dataSourceType: 'WAREHOUSE', warehouseInfo: { type: 'DATABRICKS' }, resourceGroup: 'WORKSPACE' });
    expect(wh).toMatchObject({ data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' } });
    expect((await ok('data-source/list', { dataSourceType: 'WAREHOUSE' })).results.map((d: { name: string }) => d.name)).toEqual(['wh-camel']);
    const both = await call('data-source/register', { name: 'wh-both', dataSourceType: 'WAREHOUSE', warehouseInfo: { type: 'DATABRICKS' }, warehouse_info: { type: 'DATABRICKS' }, resourceGroup: 'WORKSPACE' });
    expect([both.status, both.body.error.code, both.body.error.message]).toEqual([400, 'ERROR_INVALID_PARAMETER', expect.stringContaining('warehouseInfo')]);
    const local = await ok('data-source/register', { name: 'local-camel', dataSourceType: 'LOCAL', template: { fieldNames: ['cost'] }, resourceGroup: 'WORKSPACE', secretType: 'SECRET_TYPE_NONE' });
    expect(local).toMatchObject({ data_source_type: 'LOCAL', template: { fieldNames: ['cost'] } });
    expect(local).not.toHaveProperty('plugin_info');
    expect(local).not.toHaveProperty('warehouse_info');
    const external = await call('data-source/register', { name: 'ext-camel', dataSourceType: 'EXTERNAL', resourceGroup: 'WORKSPACE' });
    expect([external.status, external.body.error.code, external.body.error.message]).toEqual([400, 'ERROR_REQUIRED_PARAMETER', expect.stringContaining('plugin_info.plugin_id')]);
    for (const ds of [wh, local]) await ok('data-source/deregister', { dataSourceId: ds.data_source_id });
  });
});
