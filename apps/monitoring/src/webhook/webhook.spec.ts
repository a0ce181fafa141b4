import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';

describe('monitoring webhook', () => {
  let t: TestMonitoring;
  let owner: string;
  let member: string;
  let domainAdmin: string;
  let otherWorkspace: string;
  let otherDomain: string;

  beforeAll(async () => {
    t = await createTestMonitoring({ worker: false });
    // The member (test-user) belongs to project-1; member-only rules are in members.spec.ts.
    await t.publishProjects('d1', [
      { project_id: 'project-1', workspace_id: 'ws-1', users: ['test-user'] },
      { project_id: 'project-2', workspace_id: 'ws-2' },
    ]);
    await t.publishProjects('d2', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER' });
    domainAdmin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
  });
  afterAll(() => t.close());

  const call = (path: string, auth: string, body: object = {}) => request(t.app).post(`/monitoring/v1/webhook/${path}`).set('Authorization', auth).send(body);
  const create = async (name: string, plugin_info: object = { plugin_id: 'plugin-prometheus-mon-webhook' }, auth = owner) => {
    const res = await call('create', auth, { name, plugin_info, project_id: 'project-1', tags: { env: 'test' } });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('creates a webhook with a fresh access key and its URL', async () => {
    const w = await create('alertmanager');
    expect(w).toEqual({
      webhook_id: expect.stringMatching(/^webhook-[0-9a-f]{12}$/),
      name: 'alertmanager',
      state: 'ENABLED',
      access_key: expect.stringMatching(/^[A-Za-z0-9_-]{32}$/),
      webhook_url: `https://monitoring.example.test/monitoring/v1/webhook/${w.webhook_id}/${w.access_key}/events`,
      capability: {},
      plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook', version: '1.1.0', options: {}, metadata: {}, upgrade_mode: 'AUTO' },
      tags: { env: 'test' },
      requests: { total: 0, error: 0 },
      domain_id: 'd1',
      workspace_id: 'ws-1',
      project_id: 'project-1',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    const again = await create('alertmanager-2');
    expect(again.access_key).not.toBe(w.access_key);
  });

  it('checks the project against the directory: unknown, or of another workspace, is not found', async () => {
    for (const project_id of ['project-404', 'project-2']) {
      const res = await call('create', owner, { name: 'x', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id });
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain('project_id');
    }
  });

  it('validates the plugin: unknown id, unknown version, options against the plugin', async () => {
    const bad = async (plugin_info: object) => (await call('create', owner, { name: 'x', plugin_info, project_id: 'project-1' })).body.error;
    expect(await bad({ plugin_id: 'plugin-nope' })).toMatchObject({ code: 'ERROR_NOT_FOUND', status: 404 });
    expect(await bad({ plugin_id: 'plugin-grafana-mon-webhook', version: '9.9.9', upgrade_mode: 'MANUAL' })).toMatchObject({ code: 'ERROR_INVALID_PLUGIN_VERSION' });
    expect(await bad({ plugin_id: 'plugin-grafana-mon-webhook', upgrade_mode: 'MANUAL' })).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER' });
    expect((await bad({ plugin_id: 'plugin-grafana-mon-webhook', options: { nope: 1 } })).message).toContain('plugin_info.options.nope');
    expect((await bad({ plugin_id: 'plugin-grafana-mon-webhook', options: { message_root: 3 } })).message).toContain('plugin_info.options.message_root');
    expect((await bad({ plugin_id: 'plugin-api-direct-mon-webhook', options: { convert_data: { colour: '{{ x }}' } } })).message).toContain('convert_data.colour');
    expect(await bad({ plugin_id: 'plugin-grafana-mon-webhook', upgrade_mode: 'SOMETIMES' })).toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    const pinned = await create('pinned', { plugin_id: 'plugin-grafana-mon-webhook', version: '1.0.0', upgrade_mode: 'MANUAL', options: { message_root: 'Message' } });
    expect(pinned.plugin_info).toMatchObject({ version: '1.0.0', upgrade_mode: 'MANUAL', options: { message_root: 'Message' } });
  });

  it('updates name and tags; update-plugin changes version, options and mode; AUTO moves to the latest', async () => {
    const w = await create('to-change', { plugin_id: 'plugin-grafana-mon-webhook', version: '1.0.0', upgrade_mode: 'MANUAL' });
    const upd = await call('update', owner, { webhook_id: w.webhook_id, name: 'changed', tags: { a: 'b' } });
    expect(upd.body).toMatchObject({ name: 'changed', tags: { a: 'b' } });

    const v = await call('update-plugin', owner, { webhook_id: w.webhook_id, version: '1.1.0', options: { message_root: 'detail' } });
    expect(v.body.plugin_info).toEqual({ plugin_id: 'plugin-grafana-mon-webhook', version: '1.1.0', options: { message_root: 'detail' }, metadata: {}, upgrade_mode: 'MANUAL' });
    const wrong = await call('update-plugin', owner, { webhook_id: w.webhook_id, version: '7.0.0' });
    expect(wrong.body.error.code).toBe('ERROR_INVALID_PLUGIN_VERSION');
    const auto = await call('update-plugin', owner, { webhook_id: w.webhook_id, upgrade_mode: 'AUTO' });
    expect(auto.body.plugin_info).toMatchObject({ version: '1.2.0', upgrade_mode: 'AUTO', options: { message_root: 'detail' } });
    expect((await call('verify-plugin', owner, { webhook_id: w.webhook_id })).body).toEqual({});
  });

  it('enables, disables and deletes; get/list/stat see only the caller workspace and domain', async () => {
    const w = await create('lifecycle');
    expect((await call('disable', owner, { webhook_id: w.webhook_id })).body.state).toBe('DISABLED');
    expect((await call('enable', member, { webhook_id: w.webhook_id })).body.state).toBe('ENABLED');
    expect((await call('get', domainAdmin, { webhook_id: w.webhook_id })).body.webhook_id).toBe(w.webhook_id);
    expect((await call('get', otherWorkspace, { webhook_id: w.webhook_id })).status).toBe(404);
    expect((await call('get', otherDomain, { webhook_id: w.webhook_id })).status).toBe(404);
    expect((await call('disable', otherDomain, { webhook_id: w.webhook_id })).status).toBe(404);

    const list = await call('list', owner, { name: 'lifecycle' });
    expect(list.body.total_count).toBe(1);
    const byKey = await call('list', owner, { access_key: w.access_key });
    expect(byKey.body.results.map((r: { webhook_id: string }) => r.webhook_id)).toEqual([w.webhook_id]);
    expect((await call('list', otherDomain, {})).body.total_count).toBe(0);
    const dsl = await call('list', owner, { query: { filter: [{ k: 'plugin_info.plugin_id', v: 'plugin-grafana-mon-webhook', o: 'eq' }], only: ['webhook_id', 'plugin_info'] } });
    expect(dsl.body.total_count).toBeGreaterThan(0);
    expect(Object.keys(dsl.body.results[0]).sort()).toEqual(['plugin_info', 'webhook_id']);
    const stat = await call('stat', owner, { query: { aggregate: [{ group: { keys: [{ key: 'state', name: 'state' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(stat.status).toBe(200);
    expect(stat.body.results).toEqual(expect.arrayContaining([{ state: 'ENABLED', n: expect.any(Number) }]));

    expect((await call('delete', owner, { webhook_id: w.webhook_id })).body).toEqual({});
    expect((await call('get', owner, { webhook_id: w.webhook_id })).status).toBe(404);
  });

  it('needs the right role and a token', async () => {
    expect((await call('create', domainAdmin, { name: 'x', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: 'project-1' })).status).toBe(403);
    expect((await request(t.app).post('/monitoring/v1/webhook/list').send({})).status).toBe(401);
    const unknown = await call('create', owner, { name: 'x', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: 'project-1', colour: 1 });
    expect(unknown.body.error).toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    expect(unknown.body.error.message).toContain('colour');
  });
});
