import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestPlugin } from './test-support';

/**
 * The operations as a client generated from upstream's protos (cloudforet-io/api plugin/v1
 * supervisor.proto and plugin.proto) sends them: every field of the message present, the unset ones
 * at their proto3 defaults ("" / false / [] / {} / the enum's zero value).
 */
describe('plugin: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestPlugin>>;
  let admin: string;
  beforeAll(async () => {
    t = await createTestPlugin();
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
  });
  afterAll(() => t.close());
  const call = (path: string, body: object) => request(t.app).post(`/plugin/v1/${path}`).set('Authorization', admin).send(body);

  it('supervisor/publish (PublishSupervisorRequest, PluginInfo with every field) and plugin/get-plugin-endpoint (PluginEndpointRequest)', async () => {
    const info = (version: string, state: string, endpoint: string) => ({ plugin_id: 'plugin-x', version, state, endpoint, managed: false, endpoints: [], domain_id: '', supervisor_id: '', supervisor_name: '' });
    const res = await call('supervisor/publish', {
      name: 'sup',
      hostname: 'host',
      secret_key: 'k-1',
      plugin_info: [info('1.0.0', 'NONE', 'grpc://x:1'), info('1.1.0', 'ACTIVE', 'grpc://x:2')],
      is_public: false,
      labels: [],
      tags: {},
      domain_id: '',
    });
    expect(res.status).toBe(200);
    // state NONE is proto3's "not set": ACTIVE, as when it is left out
    const plugins = await call('supervisor/list-plugins', { query: { filter: [], sort: [], page: { start: 0, limit: 0 } }, supervisor_id: '', hostname: '', plugin_id: '', version: '', state: 'NONE', endpoint: '' });
    expect(plugins.body.results.map((p: { state: string }) => p.state)).toEqual(['ACTIVE', 'ACTIVE']);
    const manual = await call('plugin/get-plugin-endpoint', { plugin_id: 'plugin-x', version: '1.0.0', upgrade_mode: 'MANUAL', labels: {}, domain_id: '' });
    expect(manual.body).toEqual({ endpoint: 'grpc://x:1', updated_version: '1.0.0' });
    const auto = await call('plugin/get-plugin-endpoint', { plugin_id: 'plugin-x', version: '', upgrade_mode: 'AUTO', labels: {}, domain_id: '' });
    expect(auto.body).toEqual({ endpoint: 'grpc://x:2', updated_version: '1.1.0' });
    // upstream: MANUAL (the enum's zero value) without a version is ERROR_REQUIRED_PARAMETER, a 400
    expect((await call('plugin/get-plugin-endpoint', { plugin_id: 'plugin-x', version: '', upgrade_mode: 'MANUAL', labels: {}, domain_id: '' })).status).toBe(400);
    const list = await call('supervisor/list', { query: { filter: [], sort: [], page: { start: 0, limit: 0 } }, supervisor_id: '', name: '', is_public: false, domain_id: '' });
    expect(list.body.total_count).toBe(1);
  });
});
