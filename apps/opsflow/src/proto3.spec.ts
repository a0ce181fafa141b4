import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestOpsflow } from './test-support';

/**
 * Every operation as a client generated from upstream's protos (cloudforet-io/api 2.0.435,
 * opsflow/v1/event.proto) sends it: every field of the request message present, the unset ones at
 * their proto3 defaults ("" / 0 / false / [] / {} / the enum's zero value).
 */
const QUERY = { filter: [], filter_or: [], sort: [], page: { start: 0, limit: 0 }, minimal: false, count_only: false, only: [], keyword: '', unwind: null, lookup: [], add_fields: {} };
const STAT_QUERY = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: { start: 0, limit: 0 }, distinct: '', keyword: '', ...over });

describe('opsflow: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestOpsflow>>;
  let owner: string;
  beforeAll(async () => {
    t = await createTestOpsflow({ ingestTokens: ['tok'] });
    await t.directory.publish('d1', { projects: [{ project_id: 'p-1', workspace_id: 'ws-1', project_group_id: '', name: 'one' }], groups: [] });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    for (const [key, type, by] of [
      ['e1', 'CREATED', 'u1'],
      ['e2', 'COMMENTED', 'u2'],
    ]) {
      const r = await request(t.app)
        .post('/opsflow/v1/event/create')
        .set('Authorization', 'Bearer tok')
        .send({ event_key: key, domain_id: 'd1', project_id: 'p-1', task_id: 'task-1', event_type: type, name: key, user_id: by });
      expect(r.status).toBe(200);
    }
  });
  afterAll(() => t.close());
  const call = (path: string, body: object) => request(t.app).post(`/opsflow/v1/event/${path}`).set('Authorization', owner).send(body);

  test('event/list (EventSearchQuery) with every field at its default lists everything', async () => {
    const body = { query: QUERY, task_id: '', event_type: 'SELECTION_NONE', created_type: '', event_id: '', created_by: '', workspace_id: '', project_id: '' };
    const res = await call('list', body);
    expect(res.status).toBe(200);
    expect(res.body.total_count).toBe(2);
    expect(res.body.results[0]).toMatchObject({ name: 'e1', created_type: 'USER', created_by: 'u1', additional_info: {}, updated_at: res.body.results[0].created_at });
    const byCreator = await call('list', { ...body, created_by: 'u2' });
    expect(byCreator.body.results.map((r: { name: string }) => r.name)).toEqual(['e2']);
  });

  test('event/stat (EventStatQuery)', async () => {
    const res = await call('stat', { query: STAT_QUERY({ distinct: 'created_by' }) });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual(['u1', 'u2']);
  });
});
