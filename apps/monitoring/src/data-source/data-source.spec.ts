import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, fakePrometheus, OUTBOUND_MARKER, type TestMonitoring } from '../test-support';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS } from '@platform/net';

describe('monitoring data-source', () => {
  let t: TestMonitoring;
  let locked: TestMonitoring;
  let admin: string;
  let member: string;
  let otherDomain: string;
  let prom: Awaited<ReturnType<typeof fakePrometheus>>;

  beforeAll(async () => {
    prom = await fakePrometheus();
    t = await createTestMonitoring({ worker: false, outbound: LOOPBACK_ONLY });
    locked = await createTestMonitoring({ worker: false, outbound: NO_PRIVATE_DESTINATIONS });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER' });
    otherDomain = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN' });
  });
  afterAll(async () => {
    await t.close();
    await locked.close();
    prom.close();
  });

  const call = (path: string, auth: string, body: object = {}, app = t.app) => request(app).post(`/monitoring/v1/data-source/${path}`).set('Authorization', auth).send(body);
  const register = async (name: string, options: object = { url: prom.url }, extra: object = {}) => {
    const res = await call('register', admin, { name, plugin_info: { plugin_id: 'plugin-prometheus-mon-datasource', options, provider: 'prometheus', ...extra }, tags: { team: 'sre' } });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('registers a Prometheus data source with every field of DataSourceInfo', async () => {
    const ds = await register('prom');
    expect(ds).toEqual({
      data_source_id: expect.stringMatching(/^ds-[0-9a-f]{12}$/),
      name: 'prom',
      state: 'ENABLED',
      monitoring_type: 'METRIC',
      provider: 'prometheus',
      capability: { supported_schema: [], use_resource_secret: false, monitoring_type: 'METRIC' },
      plugin_info: {
        plugin_id: 'plugin-prometheus-mon-datasource',
        version: '1.1.0',
        options: { url: prom.url },
        metadata: { supported_stat: ['AVERAGE', 'MAX', 'MIN', 'SUM'], supported_resource_type: [], required_keys: ['url'], query_api: 'prometheus/v1' },
        upgrade_mode: 'AUTO',
        secret_id: '',
        provider: 'prometheus',
      },
      tags: { team: 'sre' },
      domain_id: 'd1',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
  });

  it('validates the plugin info: required keys, types, version, secret or provider', async () => {
    const bad = async (plugin_info: object) => (await call('register', admin, { name: 'x', plugin_info })).body.error;
    const base = { plugin_id: 'plugin-prometheus-mon-datasource', provider: 'prometheus' };
    expect(await bad({ ...base, options: {} })).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER', message: expect.stringContaining('plugin_info.options.url') });
    expect(await bad({ ...base, options: { url: 'ftp://x' } })).toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    expect(await bad({ ...base, options: { url: prom.url, timeout_ms: 'soon' } })).toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    expect(await bad({ ...base, options: { url: prom.url }, version: '0.1', upgrade_mode: 'MANUAL' })).toMatchObject({ code: 'ERROR_INVALID_PLUGIN_VERSION' });
    expect(await bad({ ...base, options: { url: prom.url }, upgrade_mode: 'MANUAL' })).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER' });
    expect(await bad({ plugin_id: 'plugin-prometheus-mon-datasource', options: { url: prom.url } })).toMatchObject({ message: expect.stringContaining('secret_id | provider') });
    expect(await bad({ plugin_id: 'plugin-nope', provider: 'x' })).toMatchObject({ code: 'ERROR_NOT_FOUND' });
  });

  it('verify-plugin checks the source really answers as Prometheus; every failure is the one uniform refusal', async () => {
    const ds = await register('reachable');
    expect((await call('verify-plugin', admin, { data_source_id: ds.data_source_id })).body).toEqual({});
    expect(prom.queries).toContain('vector(1)');

    const answers: string[] = [];
    const refused = async (res: request.Response) => {
      expect([res.status, res.body.error?.code]).toEqual([400, 'ERROR_OUTBOUND_REFUSED']);
      expect(res.text).not.toMatch(new RegExp(`${OUTBOUND_MARKER}|ECONN|HPE_|404|HTTP|not reachable|127\\.0\\.0\\.1|resolves`));
      answers.push(JSON.stringify(res.body));
    };
    // a 404, a JSON answer that is not Prometheus' (its status is a marker), a reset, a closed port
    for (const [name, url] of [
      ['wrong-path', prom.url.replace('/prom', '/other')],
      ['echo', prom.url.replace('/prom', '/echo')],
      ['reset', prom.url.replace('/prom', '/reset')],
      ['down', 'http://127.0.0.1:1'],
    ]) {
      const src = await register(name, { url, timeout_ms: 2000 });
      await refused(await call('verify-plugin', admin, { data_source_id: src.data_source_id }));
    }
    // a loopback source where the allow-list does not name loopback: refused before any request is made
    const before = prom.queries.length;
    const res = await call('register', admin, { name: 'p', plugin_info: { plugin_id: 'plugin-prometheus-mon-datasource', options: { url: prom.url }, provider: 'prometheus' } }, locked.app);
    await refused(await call('verify-plugin', admin, { data_source_id: res.body.data_source_id }, locked.app));
    expect(prom.queries.length).toBe(before);
    expect(new Set(answers).size).toBe(1);
  });

  it('updates, update-plugin (metadata refreshed), enable/disable, deregister; reads are domain-wide, writes admin-only', async () => {
    const ds = await register('lifecycle', { url: prom.url }, { version: '1.0.0', upgrade_mode: 'MANUAL' });
    expect(ds.plugin_info.version).toBe('1.0.0');
    expect((await call('update', admin, { data_source_id: ds.data_source_id, name: 'renamed', tags: {} })).body).toMatchObject({ name: 'renamed', tags: {} });
    const up = await call('update-plugin', admin, { data_source_id: ds.data_source_id, options: { url: prom.url, timeout_ms: 1000 }, upgrade_mode: 'AUTO' });
    expect(up.body.plugin_info).toMatchObject({ version: '1.1.0', upgrade_mode: 'AUTO', options: { url: prom.url, timeout_ms: 1000 }, metadata: { required_keys: ['url'] }, provider: 'prometheus' });
    // options {} is not set (proto3): the options stay; options without the required url are refused
    expect((await call('update-plugin', admin, { data_source_id: ds.data_source_id, options: {} })).body.plugin_info.options).toEqual({ url: prom.url, timeout_ms: 1000 });
    expect((await call('update-plugin', admin, { data_source_id: ds.data_source_id, options: { timeout_ms: 5 } })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');

    expect((await call('disable', admin, { data_source_id: ds.data_source_id })).body.state).toBe('DISABLED');
    expect((await call('enable', admin, { data_source_id: ds.data_source_id })).body.state).toBe('ENABLED');
    expect((await call('get', member, { data_source_id: ds.data_source_id })).body.name).toBe('renamed');
    expect((await call('disable', member, { data_source_id: ds.data_source_id })).status).toBe(403);
    expect((await call('get', otherDomain, { data_source_id: ds.data_source_id })).status).toBe(404);

    const list = await call('list', member, { monitoring_type: 'METRIC', query: { filter: [{ k: 'name', v: 'renamed', o: 'eq' }] } });
    expect(list.body).toEqual({ results: [expect.objectContaining({ data_source_id: ds.data_source_id })], total_count: 1 });
    expect((await call('list', otherDomain, {})).body.total_count).toBe(0);
    const kw = await call('list', admin, { query: { keyword: 'renam' } });
    expect(kw.body.total_count).toBe(1);
    const stat = await call('stat', admin, { query: { aggregate: [{ group: { keys: [{ key: 'provider', name: 'provider' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(stat.body.results).toEqual([{ provider: 'prometheus', n: expect.any(Number) }]);

    expect((await call('deregister', admin, { data_source_id: ds.data_source_id })).body).toEqual({});
    expect((await call('get', admin, { data_source_id: ds.data_source_id })).status).toBe(404);
  });
});
