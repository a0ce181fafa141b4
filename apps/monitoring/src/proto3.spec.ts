import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, fakePrometheus, type TestMonitoring } from './test-support';
import { LOOPBACK_ONLY } from '@platform/net';

/**
 * Every operation as a client generated from upstream's protos (cloudforet-io/api 2.0.435,
 * monitoring/v1 data_source.proto, webhook.proto, event.proto) sends it: every field of the request
 * message present, unset ones at their proto3 defaults ("" / 0 / false / [] / {} / the enum's zero
 * value); message fields left unset are omitted, and of a oneof (PluginInfo's secret_id | provider)
 * only the one set is sent, as proto3 JSON does.
 */
const PAGE = { start: 0, limit: 0 };
const QUERY = (over: object = {}) => ({ filter: [], filter_or: [], sort: [], page: PAGE, minimal: false, count_only: false, only: [], keyword: '', lookup: [], add_fields: {}, ...over });
const STAT = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: PAGE, distinct: '', keyword: '', ...over });

describe('monitoring: requests of proto3 clients', () => {
  let t: TestMonitoring;
  let prom: Awaited<ReturnType<typeof fakePrometheus>>;
  let admin: string;
  let owner: string;
  let dsId = '';
  let webhook: { webhook_id: string; access_key: string } = { webhook_id: '', access_key: '' };
  beforeAll(async () => {
    prom = await fakePrometheus();
    t = await createTestMonitoring({ outbound: LOOPBACK_ONLY });
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(async () => {
    await t?.close();
    prom?.close();
  });
  const call = (path: string, body: object, auth = owner) => request(t.app).post(`/monitoring/v1/${path}`).set('Authorization', auth).send(body);
  const ok = async (path: string, body: object, auth = owner) => {
    const res = await call(path, body, auth);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  describe('data-source', () => {
    const LIST = { data_source_id: '', name: '', state: '', monitoring_type: 'NONE', provider: '' };
    const names = async (over: object) => (await ok('data-source/list', { query: QUERY({ sort: [{ key: 'name', desc: false }] }), ...LIST, ...over }, admin)).results.map((d: { name: string }) => d.name);

    test('register: version "", metadata {} and upgrade_mode NONE are not set', async () => {
      const ds = await ok(
        'data-source/register',
        { name: 'prom', plugin_info: { plugin_id: 'plugin-prometheus-mon-datasource', version: '', options: { url: prom.url }, metadata: {}, upgrade_mode: 'NONE', provider: 'prometheus' }, tags: {} },
        admin,
      );
      dsId = ds.data_source_id;
      expect(ds).toMatchObject({ name: 'prom', state: 'ENABLED', monitoring_type: 'METRIC', tags: {}, plugin_info: { version: '1.1.0', upgrade_mode: 'AUTO', provider: 'prometheus', metadata: { required_keys: ['url'] } } });
    });

    test("get and list in protobuf's JSON names", async () => {
      expect((await ok('data-source/get', { dataSourceId: dsId }, admin)).data_source_id).toBe(dsId);
      expect((await ok('data-source/list', { query: { countOnly: true }, dataSourceId: dsId, monitoringType: 'METRIC' }, admin)).total_count).toBe(1);
    });

    test('update, update-plugin: fields at their defaults change nothing', async () => {
      await ok('data-source/update', { data_source_id: dsId, name: 'prom-1', tags: { team: 'sre' } }, admin);
      expect(await ok('data-source/update', { data_source_id: dsId, name: '', tags: {} }, admin)).toMatchObject({ name: 'prom-1', tags: { team: 'sre' } });
      const up = await ok('data-source/update-plugin', { data_source_id: dsId, version: '', options: {}, upgrade_mode: 'NONE' }, admin);
      expect(up.plugin_info).toMatchObject({ version: '1.1.0', upgrade_mode: 'AUTO', options: { url: prom.url } });
    });

    test('verify-plugin, disable, enable, get', async () => {
      expect(await ok('data-source/verify-plugin', { data_source_id: dsId }, admin)).toEqual({});
      expect(prom.queries).toContain('vector(1)');
      expect((await ok('data-source/disable', { data_source_id: dsId }, admin)).state).toBe('DISABLED');
      expect((await ok('data-source/enable', { data_source_id: dsId }, admin)).state).toBe('ENABLED');
      expect((await ok('data-source/get', { data_source_id: dsId })).name).toBe('prom-1');
    });

    test('list (monitoring_type NONE is not set; METRIC filters), stat', async () => {
      await ok('data-source/register', { name: 'other', plugin_info: { plugin_id: 'plugin-prometheus-mon-datasource', version: '', options: { url: prom.url }, metadata: {}, upgrade_mode: 'NONE', provider: 'prometheus' }, tags: {} }, admin);
      expect(await names({})).toEqual(['other', 'prom-1']);
      expect(await names({ monitoring_type: 'METRIC', name: 'prom-1' })).toEqual(['prom-1']);
      expect(await names({ monitoring_type: 'LOG' })).toEqual([]);
      expect((await ok('data-source/stat', { query: STAT({ distinct: 'name' }) })).results.sort()).toEqual(['other', 'prom-1']);
    });

    test('deregister', async () => {
      await ok('data-source/deregister', { data_source_id: dsId }, admin);
      expect(await names({})).toEqual(['other']);
    });
  });

  describe('webhook', () => {
    const LIST = { webhook_id: '', name: '', state: 'NONE', access_key: '', workspace_id: '', project_id: '' };
    const names = async (over: object) => (await ok('webhook/list', { query: QUERY({ sort: [{ key: 'name', desc: false }] }), ...LIST, ...over })).results.map((w: { name: string }) => w.name);
    const PLUGIN = { plugin_id: 'plugin-api-direct-mon-webhook', version: '', options: {}, metadata: {}, upgrade_mode: 'NONE' };

    test('create: plugin_info fields and tags at their defaults are not set', async () => {
      const w = await ok('webhook/create', { name: 'direct', plugin_info: PLUGIN, tags: {}, project_id: 'project-1' });
      webhook = w;
      expect(w).toMatchObject({ name: 'direct', state: 'ENABLED', project_id: 'project-1', workspace_id: 'ws-1', tags: {}, plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook', upgrade_mode: 'AUTO' } });
      expect(w.plugin_info.version).not.toBe('');
      await ok('webhook/create', { name: 'second', plugin_info: PLUGIN, tags: {}, project_id: 'project-1' });
    });

    test('update, update-plugin: fields at their defaults change nothing', async () => {
      await ok('webhook/update', { webhook_id: webhook.webhook_id, name: 'direct-1', tags: { a: 'b' } });
      expect(await ok('webhook/update', { webhook_id: webhook.webhook_id, name: '', tags: {} })).toMatchObject({ name: 'direct-1', tags: { a: 'b' } });
      const up = await ok('webhook/update-plugin', { webhook_id: webhook.webhook_id, version: '', options: {}, upgrade_mode: 'NONE' });
      expect(up.plugin_info).toMatchObject({ plugin_id: 'plugin-api-direct-mon-webhook', upgrade_mode: 'AUTO' });
    });

    test('verify-plugin, disable, enable, get', async () => {
      expect(await ok('webhook/verify-plugin', { webhook_id: webhook.webhook_id })).toEqual({});
      expect((await ok('webhook/disable', { webhook_id: webhook.webhook_id })).state).toBe('DISABLED');
      expect(await names({ state: 'DISABLED' })).toEqual(['direct-1']);
      expect((await ok('webhook/enable', { webhook_id: webhook.webhook_id })).state).toBe('ENABLED');
      expect((await ok('webhook/get', { webhook_id: webhook.webhook_id })).name).toBe('direct-1');
    });

    test('list (WebhookState NONE is not set), stat', async () => {
      expect(await names({})).toEqual(['direct-1', 'second']);
      expect(await names({ state: 'ENABLED', access_key: webhook.access_key })).toEqual(['direct-1']);
      expect((await ok('webhook/stat', { query: STAT({ distinct: 'name' }) })).results.sort()).toEqual(['direct-1', 'second']);
    });
  });

  describe('event', () => {
    const LIST = { event_id: '', event_key: '', event_type: '', severity: '', resource: '', provider: '', account: '', workspace_id: '', project_id: '', alert_id: '', webhook_id: '' };
    const keys = async (over: object) => (await ok('event/list', { query: QUERY({ sort: [{ key: 'event_key', desc: false }] }), ...LIST, ...over })).results.map((e: { event_key: string }) => e.event_key);

    test('create (CreateEventRequest), then get, list (EventQuery at its defaults lists all), stat', async () => {
      for (const data of [
        { event_key: 'cpu', title: 'CPU high', severity: 'CRITICAL', provider: 'aws', account: 'acct-a' },
        { event_key: 'disk', title: 'Disk full', severity: 'WARNING', provider: 'aws', account: '' },
      ]) {
        const res = await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: webhook.webhook_id, access_key: webhook.access_key, data });
        expect([res.status, res.body]).toEqual([200, {}]);
      }
      await t.waitForDeliveries(2);
      expect(await keys({})).toEqual(['cpu', 'disk']);
      expect(await keys({ severity: 'WARNING', webhook_id: webhook.webhook_id })).toEqual(['disk']);
      const [first] = (await ok('event/list', { query: QUERY({ filter: [{ k: 'event_key', v: 'cpu', o: 'eq' }] }), ...LIST })).results;
      expect(await ok('event/get', { event_id: first.event_id })).toMatchObject({ event_key: 'cpu', severity: 'CRITICAL', account: 'acct-a', project_id: 'project-1' });
      expect((await ok('event/stat', { query: STAT({ distinct: 'severity' }) })).results.sort()).toEqual(['CRITICAL', 'WARNING']);
    });
  });

  test('webhook/delete', async () => {
    await ok('webhook/delete', { webhook_id: webhook.webhook_id });
    expect((await call('webhook/get', { webhook_id: webhook.webhook_id })).status).toBe(404);
  });
});
