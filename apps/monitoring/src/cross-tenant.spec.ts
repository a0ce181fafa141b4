import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, fakePrometheus, type TestMonitoring } from './test-support';
import { LOOPBACK_ONLY } from '@platform/net';

/**
 * Object-level authorization (OWASP API1, docs/security.md): every per-record operation of webhooks and
 * data sources answers another domain's (and, for webhooks, another workspace's) caller
 * ERROR_NOT_FOUND, and leaves the record as it was.
 */
describe('monitoring: another tenant reaches no record by id', () => {
  let t: TestMonitoring;
  let prom: Awaited<ReturnType<typeof fakePrometheus>>;
  let owner: string;
  let admin: string;
  let otherDomain: string;
  let otherDomainOwner: string;
  let otherWorkspace: string;

  const call = (path: string, auth: string, body: object) => request(t.app).post(`/monitoring/v1/${path}`).set('Authorization', auth).send(body);

  beforeAll(async () => {
    t = await createTestMonitoring({ worker: false, outbound: LOOPBACK_ONLY });
    prom = await fakePrometheus();
    await t.publishProjects('d1', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    await t.publishProjects('d2', [{ project_id: 'project-1', workspace_id: 'ws-1' }]);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
    otherDomain = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN' });
    otherDomainOwner = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER' });
  });
  afterAll(async () => {
    prom?.close();
    await t?.close();
  });

  it('webhooks: get, update, update-plugin, verify-plugin, enable, disable and delete are 404 and change nothing', async () => {
    const created = await call('webhook/create', owner, { name: 'hook', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: 'project-1' });
    expect(created.status).toBe(200);
    const id = created.body.webhook_id;
    const ops: [string, object][] = [
      ['webhook/get', {}],
      ['webhook/update', { name: 'taken', tags: { x: '1' } }],
      ['webhook/update-plugin', { options: {} }],
      ['webhook/verify-plugin', {}],
      ['webhook/disable', {}],
      ['webhook/enable', {}],
      ['webhook/delete', {}],
    ];
    for (const auth of [otherDomainOwner, otherWorkspace]) {
      for (const [path, body] of ops) {
        const res = await call(path, auth, { webhook_id: id, ...body });
        expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'ERROR_NOT_FOUND']);
      }
      expect((await call('webhook/list', auth, { webhook_id: id })).body.total_count).toBe(0);
    }
    expect((await call('webhook/get', owner, { webhook_id: id })).body).toEqual(created.body);
  });

  it('data sources: get, update, update-plugin, verify-plugin, enable, disable and deregister are 404 and change nothing', async () => {
    const registered = await call('data-source/register', admin, { name: 'prom', plugin_info: { plugin_id: 'plugin-prometheus-mon-datasource', options: { url: prom.url }, provider: 'prometheus' } });
    expect(registered.status).toBe(200);
    const id = registered.body.data_source_id;
    const queries = prom.queries.length;
    const ops: [string, object][] = [
      ['data-source/get', {}],
      ['data-source/update', { name: 'taken' }],
      ['data-source/update-plugin', { options: { url: 'http://127.0.0.1:1/' } }],
      ['data-source/verify-plugin', {}],
      ['data-source/disable', {}],
      ['data-source/enable', {}],
      ['data-source/deregister', {}],
    ];
    for (const [path, body] of ops) {
      const res = await call(path, otherDomain, { data_source_id: id, ...body });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 404, 'ERROR_NOT_FOUND']);
    }
    expect((await call('data-source/list', otherDomain, {})).body.total_count).toBe(0);
    expect((await call('data-source/get', admin, { data_source_id: id })).body).toEqual(registered.body);
    expect(prom.queries.length).toBe(queries); // the refused verify reached nothing
  });
});
