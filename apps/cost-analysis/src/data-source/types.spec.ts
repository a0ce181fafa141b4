import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from '../test-support';
import { DataSourceScheduler } from './scheduler';

/**
 * Data source types (issue #29): EXTERNAL (a plugin), LOCAL (no plugin, a template) and WAREHOUSE
 * (upstream's Databricks warehouse: `warehouse_info.type`). What register answers for each, what each
 * refuses, and that only EXTERNAL ones sync, on demand or on schedule (real Postgres and Redis).
 */
jest.setTimeout(60_000);

const PLUGIN = 'plugin-http-file-cost-datasource';
const TEMPLATE = { fields: ['cost', 'currency', 'billed_date'] };

describe('data source types', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let owner: string;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    files = await serveFiles({ '/c.csv': 'cost,currency,year,month,day\n1.5,USD,2025,3,1\n' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await files?.close();
    await t?.close();
  });

  const call = (path: string, body: object) => request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
  const ok = async (path: string, body: object) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const refused = async (path: string, body: object) => {
    const res = await call(path, body);
    return [res.status, res.body.error?.code, res.body.error?.message];
  };
  const jobsOf = async (id: string) => (await t.db.pool.query(`SELECT job_id FROM job WHERE data_source_id = $1`, [id])).rows;

  it('registers a WAREHOUSE data source with warehouse_info and no plugin_info, and answers it so', async () => {
    const ds = await ok('data-source/register', { name: 'wh', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' }, resource_group: 'WORKSPACE' });
    expect(ds).toMatchObject({ data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' }, workspace_id: 'ws-1' });
    expect(ds).not.toHaveProperty('plugin_info');
    expect(await ok('data-source/get', { data_source_id: ds.data_source_id })).toEqual(ds);
    const listed = await ok('data-source/list', { data_source_type: 'WAREHOUSE' });
    expect(listed.results.map((d: { name: string }) => d.name)).toEqual(['wh']);
  });

  it('refuses a WAREHOUSE data source without warehouse_info.type, and an unknown warehouse type', async () => {
    for (const warehouse_info of [undefined, {}, { type: 'NONE' }, { type: '' }]) {
      expect(await refused('data-source/register', { name: 'wh-x', data_source_type: 'WAREHOUSE', warehouse_info, resource_group: 'WORKSPACE' })).toEqual([
        400,
        'ERROR_REQUIRED_PARAMETER',
        expect.stringContaining('warehouse_info.type'),
      ]);
    }
    const [status, code] = await refused('data-source/register', { name: 'wh-x', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'SNOWFLAKE' }, resource_group: 'WORKSPACE' });
    expect([status, code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect((await t.db.pool.query(`SELECT 1 FROM data_source WHERE name = 'wh-x'`)).rowCount).toBe(0);
  });

  it('registers a LOCAL data source without plugin_info, with or without a template (the proto marks it optional)', async () => {
    const ds = await ok('data-source/register', { name: 'local', data_source_type: 'LOCAL', template: TEMPLATE, resource_group: 'WORKSPACE' });
    expect(ds).toMatchObject({ data_source_type: 'LOCAL', template: TEMPLATE });
    expect(ds).not.toHaveProperty('plugin_info');
    expect(ds).not.toHaveProperty('warehouse_info');
    const bare = await ok('data-source/register', { name: 'local-bare', data_source_type: 'LOCAL', resource_group: 'WORKSPACE' });
    expect(bare).toMatchObject({ data_source_type: 'LOCAL', template: {} });
    expect(bare).not.toHaveProperty('plugin_info');
  });

  it('ignores plugin_info on LOCAL and WAREHOUSE and warehouse_info on EXTERNAL and LOCAL, as upstream', async () => {
    const plugin_info = { plugin_id: PLUGIN, options: { base_url: files.url('/c.csv') }, secret_data: { token: 'tok-types-8812' } };
    const local = await ok('data-source/register', { name: 'local-p', data_source_type: 'LOCAL', template: TEMPLATE, plugin_info, warehouse_info: { type: 'DATABRICKS' }, resource_group: 'WORKSPACE' });
    expect(local).not.toHaveProperty('plugin_info');
    expect(local).not.toHaveProperty('warehouse_info');
    const wh = await ok('data-source/register', { name: 'wh-p', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' }, plugin_info, resource_group: 'WORKSPACE' });
    expect(wh).not.toHaveProperty('plugin_info');
    const ext = await ok('data-source/register', { name: 'ext-w', plugin_info, warehouse_info: { type: 'DATABRICKS' }, resource_group: 'WORKSPACE' });
    expect(ext).toMatchObject({ data_source_type: 'EXTERNAL', plugin_info: { plugin_id: PLUGIN } });
    expect(ext).not.toHaveProperty('warehouse_info');
    // the ignored plugin_info is never verified: one EXTERNAL refuses (an unknown plugin, a refused URL)
    // is accepted and dropped on LOCAL and WAREHOUSE
    for (const bad of [{ plugin_id: 'plugin-no-such' }, { plugin_id: PLUGIN, options: { base_url: 'ftp://169.254.169.254/x.csv' } }]) {
      const [status] = await refused('data-source/register', { name: 'ext-bad', plugin_info: bad, resource_group: 'WORKSPACE' });
      expect([400, 404]).toContain(status);
      const l = await ok('data-source/register', { name: `local-${bad.plugin_id}`, data_source_type: 'LOCAL', template: TEMPLATE, plugin_info: bad, resource_group: 'WORKSPACE' });
      expect(l).not.toHaveProperty('plugin_info');
    }
    // the ignored secret is not kept for a data source without a plugin
    const { rows } = await t.db.pool.query(`SELECT data_source_id, plugin_info, warehouse_info, secret_data::text AS s FROM data_source WHERE name IN ('local-p', 'wh-p')`);
    for (const r of rows) {
      expect(r.plugin_info).toBeNull();
      expect(r.s).not.toContain('tok-types-8812');
    }
  });

  it('an EXTERNAL data source still needs plugin_info: upstream REQUIRED plugin_info.plugin_id', async () => {
    for (const body of [{ data_source_type: 'EXTERNAL' }, {}, { data_source_type: 'EXTERNAL', plugin_info: {} }]) {
      expect(await refused('data-source/register', { name: 'ext-x', resource_group: 'WORKSPACE', ...body })).toEqual([
        400,
        'ERROR_REQUIRED_PARAMETER',
        expect.stringContaining('plugin_info.plugin_id'),
      ]);
    }
  });

  it('sync of a WAREHOUSE or LOCAL data source is 400 ERROR_NOT_ALLOW_SYNC_COMMAND naming why, and makes no job', async () => {
    const wh = await ok('data-source/register', { name: 'wh-sync', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' }, resource_group: 'WORKSPACE' });
    const [status, code, message] = await refused('data-source/sync', { data_source_id: wh.data_source_id });
    expect([status, code]).toEqual([400, 'ERROR_NOT_ALLOW_SYNC_COMMAND']);
    expect(message).toMatch(/WAREHOUSE.*DATABRICKS.*no warehouse connector/);
    expect(await jobsOf(wh.data_source_id)).toEqual([]);
    const local = await ok('data-source/register', { name: 'local-sync', data_source_type: 'LOCAL', template: TEMPLATE, resource_group: 'WORKSPACE' });
    expect((await refused('data-source/sync', { data_source_id: local.data_source_id })).slice(0, 2)).toEqual([400, 'ERROR_NOT_ALLOW_SYNC_COMMAND']);
    expect(await jobsOf(local.data_source_id)).toEqual([]);
  });

  it('update-plugin of a data source without a plugin is 400 ERROR_NOT_ALLOW_PLUGIN_SETTINGS', async () => {
    const wh = await ok('data-source/register', { name: 'wh-up', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' }, resource_group: 'WORKSPACE' });
    const local = await ok('data-source/register', { name: 'local-up', data_source_type: 'LOCAL', template: TEMPLATE, resource_group: 'WORKSPACE' });
    for (const ds of [wh, local]) {
      expect((await refused('data-source/update-plugin', { data_source_id: ds.data_source_id, options: { base_url: files.url('/c.csv') } })).slice(0, 2)).toEqual([
        400,
        'ERROR_NOT_ALLOW_PLUGIN_SETTINGS',
      ]);
      expect((await ok('data-source/get', { data_source_id: ds.data_source_id })).plugin_info).toBeUndefined();
    }
  });

  it('the scheduler never syncs a LOCAL or WAREHOUSE data source, even with a schedule and an enable', async () => {
    t.clock.set('2025-03-10T15:20:00Z');
    const schedule = { state: 'ENABLED', hours: [16] };
    const wh = await ok('data-source/register', { name: 'wh-sched', data_source_type: 'WAREHOUSE', warehouse_info: { type: 'DATABRICKS' }, schedule, resource_group: 'WORKSPACE' });
    const local = await ok('data-source/register', { name: 'local-sched', data_source_type: 'LOCAL', template: TEMPLATE, schedule, resource_group: 'WORKSPACE' });
    for (const ds of [wh, local]) {
      expect(ds).toMatchObject({ schedule: { state: 'ENABLED', hours: [16] }, next_sync_at: null });
      await ok('data-source/disable', { data_source_id: ds.data_source_id });
      expect((await ok('data-source/enable', { data_source_id: ds.data_source_id })).next_sync_at).toBeNull();
      expect((await ok('data-source/update', { data_source_id: ds.data_source_id, schedule: { state: 'ENABLED', hours: [17] } })).next_sync_at).toBeNull();
    }
    // a row that somehow came due (a slot written by hand) is still not picked by the scheduler
    await t.db.pool.query(`UPDATE data_source SET next_sync_at = '2025-03-10T16:00:00Z' WHERE data_source_id = ANY($1)`, [[wh.data_source_id, local.data_source_id]]);
    t.clock.set('2025-03-10T18:00:00Z');
    const report = await new DataSourceScheduler({ ...t.deps, clock: t.clock.now }).tick();
    expect(report.created + report.failed).toBe(0);
    expect([...(await jobsOf(wh.data_source_id)), ...(await jobsOf(local.data_source_id))]).toEqual([]);
    t.clock.set(null);
  });
});
