import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { keyId, isSealedJson } from '@platform/secrets';
import { bearer, waitFor } from '@platform/testing';
import { PluginError, type CostDataSourcePlugin, type PluginInput } from '../plugin/types';
import { createTestCostAnalysis } from '../test-support';
import { sealDataSourceSecrets } from './secret';

/**
 * data_source.secret_data at rest: sealed in the row, opened for the plugin at verify, get_tasks and
 * get_data, never in an answer; plain rows from before sealing keep working and the backfill seals them.
 */
const TOKEN = 'tok-SECRET-9f3a61';
const k1 = randomBytes(32);
const k2 = randomBytes(32);

/** A plugin that works only with the right secret, and remembers the secrets it was handed. */
function secretPlugin(seen: Record<string, unknown>[]): CostDataSourcePlugin {
  const check = (input: PluginInput) => {
    seen.push(input.secret_data);
    if (input.secret_data.token !== TOKEN) throw new PluginError('ERROR_AUTHENTICATE_FAILURE', 'the plugin was not given its token');
  };
  return {
    plugin_id: 'plugin-secret-test-cost-datasource',
    name: 'secret test',
    versions: ['1.0.0'],
    required_keys: [],
    init: () => ({ metadata: {} }),
    async verify(input) {
      check(input);
    },
    async getTasks(input) {
      check(input);
      return { tasks: [{ task_options: {} }], changed: [] };
    },
    async *getData(input) {
      check(input);
      const rec = { cost: 12.5, currency: 'USD', usage_quantity: 1, usage_type: '', usage_unit: '', provider: 'aws', region_code: '', product: 'EC2', account: 'a', project_id: '', service_account_id: '', billed_date: '2024-05-03', tags: {}, additional_info: {} };
      yield { results: [rec], errors: [] };
    },
  };
}

jest.setTimeout(60_000);

describe('data source secret_data at rest', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let owner: string;
  const seen: Record<string, unknown>[] = [];
  /** Every answer of the API in this file: none may carry the secret or its ciphertext. */
  const answers: string[] = [];

  beforeAll(async () => {
    t = await createTestCostAnalysis({ secretKeys: [k1] });
    t.deps.plugins.register(secretPlugin(seen));
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(() => t?.close());

  const call = async (path: string, body: object = {}) => {
    const res = await request(t.app).post(`/cost-analysis/v1/${path}`).set('Authorization', owner).send(body);
    answers.push(res.text);
    return res;
  };
  const ok = async (path: string, body: object = {}) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const register = (name: string) =>
    ok('data-source/register', { name, resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-secret-test-cost-datasource', secret_data: { token: TOKEN } } });
  const row = async (id: string) =>
    (await t.db.pool.query(`SELECT secret_data, secret_data::text AS raw FROM data_source WHERE domain_id = 'd1' AND data_source_id = $1`, [id])).rows[0];
  const collect = async (id: string) => {
    const job = await ok('data-source/sync', { data_source_id: id });
    return waitFor(async () => {
      const j = await ok('job/get', { job_id: job.job_id });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 40_000);
  };

  it('does not open a sealed secret_data copied into another data source', async () => {
    const a = await register('copy-source');
    const b = await register('copy-target');
    const job = await ok('data-source/sync', { data_source_id: b.data_source_id }); // queued; no worker yet
    await t.db.pool.query(`UPDATE data_source SET secret_data = (SELECT secret_data FROM data_source WHERE data_source_id = $1) WHERE data_source_id = $2`, [a.data_source_id, b.data_source_id]);

    t.startWorker();
    const done = await waitFor(async () => {
      const j = await ok('job/get', { job_id: job.job_id });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 40_000);
    expect(done.status).toBe('FAILURE');
    const tasks = await ok('job-task/list', { job_id: job.job_id });
    expect(tasks.results[0]).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_SECRET_UNREADABLE' });
    const res = await call('data-source/sync', { data_source_id: b.data_source_id });
    expect(res.status).toBe(500);
    expect(res.body.error).toMatchObject({ code: 'ERROR_SECRET_UNREADABLE', status: 500 });
    expect(seen.filter((s) => s.token !== TOKEN)).toEqual([]); // the plugin never got the other row's secret
  });

  it('stores secret_data sealed at register, and collects with it end to end', async () => {
    seen.length = 0;
    const ds = await register('sealed');
    const r = await row(ds.data_source_id);
    expect(isSealedJson(r.secret_data)).toBe(true);
    expect(r.secret_data.key_id).toBe(keyId(k1));
    expect(r.raw).not.toContain(TOKEN);

    const job = await collect(ds.data_source_id);
    expect(job).toMatchObject({ status: 'SUCCESS', error_code: '' });
    expect(seen).toEqual([{ token: TOKEN }, { token: TOKEN }, { token: TOKEN }]); // verify, get_tasks, get_data
    const costs = await ok('unified-cost/list', { query: { filter: [{ k: 'data_source_id', v: ds.data_source_id, o: 'eq' }] } });
    expect(costs.results).toHaveLength(1);
    expect(costs.results[0].cost.USD).toBe(12.5);
  });

  it('reads a plain secret_data written the old way, and the backfill seals it once', async () => {
    const ds = await register('legacy');
    await t.db.pool.query(`UPDATE data_source SET secret_data = $1::jsonb WHERE data_source_id = $2`, [JSON.stringify({ token: TOKEN }), ds.data_source_id]);
    expect((await row(ds.data_source_id)).raw).toContain(TOKEN);
    expect((await collect(ds.data_source_id)).status).toBe('SUCCESS');

    expect(await sealDataSourceSecrets(t.db.pool, t.config.secretKeys)).toMatchObject({ sealed: 1, resealed: 0 });
    const r = await row(ds.data_source_id);
    expect(isSealedJson(r.secret_data)).toBe(true);
    expect(r.raw).not.toContain(TOKEN);
    expect(await sealDataSourceSecrets(t.db.pool, t.config.secretKeys)).toMatchObject({ sealed: 0, resealed: 0 });
    expect((await collect(ds.data_source_id)).status).toBe('SUCCESS');
  });

  it('opens secrets sealed under a previous key after rotation, seals new ones with the new key, and the backfill moves old ones to it', async () => {
    const old = await register('before-rotation');
    t.config.secretKeys = [k2, k1];
    expect((await collect(old.data_source_id)).status).toBe('SUCCESS');
    const fresh = await register('after-rotation');
    expect((await row(fresh.data_source_id)).secret_data.key_id).toBe(keyId(k2));

    t.config.secretKeys = [k2]; // the old key dropped too early
    const res = await call('data-source/sync', { data_source_id: old.data_source_id });
    expect(res.body.error).toMatchObject({ code: 'ERROR_SECRET_KEY_UNAVAILABLE', status: 500 });
    expect((await collect(fresh.data_source_id)).status).toBe('SUCCESS');

    // `secrets seal` seals again with the new key what the old one sealed (the copied row of the first
    // test does not open: counted, left alone); then the old key can go.
    t.config.secretKeys = [k2, k1];
    expect(await sealDataSourceSecrets(t.db.pool, t.config.secretKeys)).toEqual({ sealed: 0, resealed: 4, unreadable: 1 });
    expect((await row(old.data_source_id)).secret_data.key_id).toBe(keyId(k2));
    t.config.secretKeys = [k2];
    expect((await collect(old.data_source_id)).status).toBe('SUCCESS');
  });

  it('never answers secret_data, in any form', async () => {
    const ds = await register('answers');
    await ok('data-source/get', { data_source_id: ds.data_source_id });
    await ok('data-source/list', {});
    await ok('data-source/list', { query: { only: ['data_source_id', 'plugin_info'] } });
    await ok('data-source/stat', { query: { aggregate: [{ group: { keys: [{ key: 'name', name: 'name' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    await ok('data-source/update', { data_source_id: ds.data_source_id, tags: { a: 'b' } });
    await ok('data-source/update-plugin', { data_source_id: ds.data_source_id });
    await ok('data-source/disable', { data_source_id: ds.data_source_id });
    await ok('data-source/enable', { data_source_id: ds.data_source_id });
    await ok('job/list', {});
    await ok('job-task/list', {});
    expect((await call('data-source/list', { query: { filter: [{ k: 'secret_data.token', v: TOKEN, o: 'eq' }] } })).status).toBe(400);

    const { rows } = await t.db.pool.query(`SELECT secret_data->>'ciphertext' AS c FROM data_source WHERE secret_data ? 'ciphertext'`);
    expect(rows.length).toBeGreaterThan(3);
    expect(answers.length).toBeGreaterThan(20);
    for (const a of answers) {
      expect(a).not.toContain(TOKEN);
      for (const r of rows) expect(a).not.toContain(r.c);
    }
  });
});
