import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestMonitoring, type TestMonitoring } from '../test-support';

describe('monitoring event get/list/stat', () => {
  let t: TestMonitoring;
  let owner: string;
  let owner2: string;
  let domainAdmin: string;
  let otherDomain: string;
  let w1: { webhook_id: string; access_key: string };
  let w2: { webhook_id: string; access_key: string };

  const seed = [
    { event_key: 'cpu-web-1', title: 'CPU high on web-1', severity: 'CRITICAL', resource: { resource_id: 'web-1', resource_type: 'host' }, provider: 'aws', account: 'acct-a' },
    { event_key: 'cpu-web-1', title: 'CPU high on web-1', severity: 'CRITICAL', resource: { resource_id: 'web-1', resource_type: 'host' }, provider: 'aws', account: 'acct-a' },
    { event_key: 'disk-db-1', title: 'Disk full on db-1', severity: 'WARNING', resource: { resource_id: 'db-1', resource_type: 'host' }, provider: 'aws', account: 'acct-b' },
    { event_key: 'lat-api', title: 'API latency', severity: 'WARNING', resource: { resource_id: 'svc-api', resource_type: 'service' }, provider: 'google_cloud', account: 'proj-x' },
    { event_key: 'cert', title: 'Certificate expires soon', severity: 'INFO', resource: {}, provider: '', account: '' },
  ];

  beforeAll(async () => {
    t = await createTestMonitoring();
    await t.publishProjects('d1', [
      { project_id: 'project-1', workspace_id: 'ws-1' },
      { project_id: 'project-9', workspace_id: 'ws-2' },
    ]);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    owner2 = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER' });
    domainAdmin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER' });
    const mk = async (auth: string, project_id: string) =>
      (await request(t.app).post('/monitoring/v1/webhook/create').set('Authorization', auth).send({ name: 'direct', plugin_info: { plugin_id: 'plugin-api-direct-mon-webhook' }, project_id })).body;
    w1 = await mk(owner, 'project-1');
    w2 = await mk(owner2, 'project-9');
    for (const data of seed) {
      const res = await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: w1.webhook_id, access_key: w1.access_key, data });
      expect(res.status).toBe(200);
    }
    await request(t.app).post('/monitoring/v1/event/create').send({ webhook_id: w2.webhook_id, access_key: w2.access_key, data: { event_key: 'ws2', title: 'other workspace', severity: 'CRITICAL' } });
    await t.waitForDeliveries(seed.length + 1);
  });
  afterAll(() => t.close());

  const call = (path: string, auth: string, body: object = {}) => request(t.app).post(`/monitoring/v1/event/${path}`).set('Authorization', auth).send(body);
  const keys = (res: request.Response) => res.body.results.map((e: { event_key: string }) => e.event_key).sort();

  it('lists with the named filters (resource, severity, provider, account, event_key, alert_id, webhook_id)', async () => {
    expect((await call('list', owner)).body.total_count).toBe(5);
    expect(keys(await call('list', owner, { resource: 'web-1' }))).toEqual(['cpu-web-1', 'cpu-web-1']);
    expect(keys(await call('list', owner, { severity: 'WARNING' }))).toEqual(['disk-db-1', 'lat-api']);
    expect(keys(await call('list', owner, { provider: 'aws', account: 'acct-b' }))).toEqual(['disk-db-1']);
    const cpu = await call('list', owner, { event_key: 'cpu-web-1' });
    const [a, b] = cpu.body.results;
    expect(a.alert_id).toBe(b.alert_id);
    expect((await call('list', owner, { alert_id: a.alert_id })).body.total_count).toBe(2);
    expect((await call('list', owner, { webhook_id: w2.webhook_id })).body.total_count).toBe(0);
    expect((await call('list', owner, { event_type: 'ALERT', project_id: 'project-1' })).body.total_count).toBe(5);
  });

  it('takes the query DSL: filter operators, filter_or, keyword, sort, page, only, count_only', async () => {
    const inList = await call('list', owner, { query: { filter: [{ key: 'severity', value: ['CRITICAL', 'INFO'], operator: 'in' }] } });
    expect(keys(inList)).toEqual(['cert', 'cpu-web-1', 'cpu-web-1']);
    const nested = await call('list', owner, { query: { filter: [{ k: 'resource.resource_type', v: 'service', o: 'eq' }] } });
    expect(keys(nested)).toEqual(['lat-api']);
    const either = await call('list', owner, { query: { filter_or: [{ k: 'account', v: 'proj-x', o: 'eq' }, { k: 'title', v: 'certificate', o: 'contain' }] } });
    expect(keys(either)).toEqual(['cert', 'lat-api']);
    expect(keys(await call('list', owner, { query: { keyword: 'disk' } }))).toEqual(['disk-db-1']);
    const recent = await call('list', owner, { query: { filter: [{ k: 'created_at', v: 'now/d - 1d', o: 'timediff_gt' }] } });
    expect(recent.body.total_count).toBe(5);
    const page = await call('list', owner, { query: { sort: [{ key: 'event_key', desc: true }], page: { start: 2, limit: 2 }, only: ['event_key', 'severity'] } });
    expect(page.body).toEqual({ results: [{ event_key: 'disk-db-1', severity: 'WARNING' }, { event_key: 'cpu-web-1', severity: 'CRITICAL' }], total_count: 5 });
    expect((await call('list', owner, { query: { count_only: true } })).body).toEqual({ results: [], total_count: 5 });
    const bad = await call('list', owner, { query: { filter: [{ k: 'severity', v: 'x', o: 'almost' }] } });
    expect(bad.status).toBe(400);
    const unknown = await call('list', owner, { query: { filter: [{ k: 'no_such_field', v: 'x', o: 'eq' }] } });
    expect(unknown.status).toBe(400);
  });

  it('stat groups and counts within the caller scope', async () => {
    const res = await call('stat', owner, {
      query: { aggregate: [{ group: { keys: [{ key: 'severity', name: 'severity' }], fields: [{ name: 'count', operator: 'count' }] } }, { sort: [{ key: 'severity' }] }] },
    });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { severity: 'CRITICAL', count: 2 },
      { severity: 'INFO', count: 1 },
      { severity: 'WARNING', count: 2 },
    ]);
    const distinct = await call('stat', domainAdmin, { query: { distinct: 'workspace_id' } });
    expect(distinct.body.results).toEqual(['ws-1', 'ws-2']);
    expect((await call('stat', owner, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
  });

  it('get, and the scope: other workspaces and domains see nothing', async () => {
    const [e] = (await call('list', owner, { event_key: 'lat-api' })).body.results;
    expect((await call('get', owner, { event_id: e.event_id })).body).toEqual(e);
    expect((await call('get', owner2, { event_id: e.event_id })).status).toBe(404);
    expect((await call('get', otherDomain, { event_id: e.event_id })).status).toBe(404);
    expect((await call('get', domainAdmin, { event_id: e.event_id })).body.event_id).toBe(e.event_id);
    expect((await call('list', owner2)).body.total_count).toBe(1);
    expect((await call('list', domainAdmin)).body.total_count).toBe(6);
    expect((await call('list', otherDomain)).body.total_count).toBe(0);
    expect((await request(t.app).post('/monitoring/v1/event/list').send({})).status).toBe(401);
  });
});
