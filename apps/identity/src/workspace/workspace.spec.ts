import request from 'supertest';
import { bearer } from '@platform/testing';
import { DirectoryClient } from '@platform/directory';
import { createTestIdentity, seedDomain } from '../test-support';

describe('identity workspace', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  let owner: string;
  let member: string;
  let otherAdmin: string;

  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1']);
    await seedDomain(t.admin, 'd2', ['ws-x']);
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/workspace/${verb}`).set('Authorization', auth).send(body);

  it('creates a workspace with a generated id and every field of WorkspaceInfo; the directory names it', async () => {
    const res = await call('create', admin, { name: 'Platform team', tags: { cost_center: 'cc-1' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      workspace_id: expect.stringMatching(/^workspace-[0-9a-f]{12}$/),
      name: 'Platform team',
      state: 'ENABLED',
      tags: { cost_center: 'cc-1' },
      created_by: 'admin',
      references: [],
      is_managed: false,
      packages: [],
      is_dormant: false,
      dormant_ttl: 0,
      service_account_count: 0,
      user_count: 0,
      cost_info: { day: 0, month: 0 },
      workspace_group_id: '',
      domain_id: 'd1',
      trusted_account_id: '',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_synced_at: '',
      dormant_updated_at: '',
      changed_at: '',
    });
    const dir = new DirectoryClient(t.deps.redis, t.deps.redisPrefix);
    expect(await dir.getWorkspace('d1', res.body.workspace_id)).toEqual({ workspace_id: res.body.workspace_id, name: 'Platform team' });
  });

  it('is DOMAIN_ADMIN only: a workspace owner and a member are refused every operation (403)', async () => {
    for (const auth of [owner, member]) {
      for (const [verb, body] of [
        ['create', { name: 'x' }],
        ['update', { workspace_id: 'ws-1', name: 'y' }],
        ['delete', { workspace_id: 'ws-1' }],
        ['enable', { workspace_id: 'ws-1' }],
        ['disable', { workspace_id: 'ws-1' }],
        ['get', { workspace_id: 'ws-1' }],
        ['list', {}],
        ['stat', { query: { distinct: 'name' } }],
      ] as const) {
        const res = await call(verb, auth, body);
        expect([verb, res.status, res.body.error?.code]).toEqual([verb, 403, 'ERROR_PERMISSION_DENIED']);
      }
    }
  });

  it("never shows or changes another domain's workspace (404)", async () => {
    for (const verb of ['get', 'update', 'delete', 'enable', 'disable']) {
      const res = await call(verb, otherAdmin, { workspace_id: 'ws-1', ...(verb === 'update' && { name: 'stolen' }) });
      expect([verb, res.status]).toEqual([verb, 404]);
    }
    const list = await call('list', otherAdmin, {});
    expect(list.body.results.map((w: { workspace_id: string }) => w.workspace_id)).toEqual(['ws-x']);
    expect((await call('get', admin, { workspace_id: 'ws-1' })).body.name).toBe('ws-1');
  });

  it('updates, lists with filters and stats, counting users', async () => {
    const created = (await call('create', admin, { name: 'listed' })).body;
    expect((await call('update', admin, { workspace_id: created.workspace_id, name: 'renamed', tags: { a: 1 } })).body).toMatchObject({ name: 'renamed', tags: { a: 1 } });
    const ws1 = (await call('get', admin, { workspace_id: 'ws-1' })).body;
    expect(ws1.user_count).toBe(3); // owner, member and member2 (seedDomain)
    const list = await call('list', admin, { name: 'renamed' });
    expect(list.body.total_count).toBe(1);
    const q = await call('list', admin, { query: { filter: [{ k: 'state', v: 'ENABLED', o: 'eq' }], sort: [{ key: 'name' }] } });
    expect(q.status).toBe(200);
    expect(q.body.results.length).toBeGreaterThanOrEqual(3);
    expect((await call('list', admin, { is_dormant: true })).body).toEqual({ results: [], total_count: 0 });
    const stat = await call('stat', admin, { query: { aggregate: [{ group: { fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(stat.status).toBe(200);
    expect(stat.body.results[0].n).toBeGreaterThanOrEqual(3);
    expect((await call('list', admin, { query: { filter: [{ k: 'password_hash', v: 'x', o: 'eq' }] } })).status).toBe(400);
  });

  it('validates: unknown fields, empty names, unknown ids', async () => {
    expect((await call('create', admin, { name: 'x', domain_id: 'd2' })).status).toBe(403);
    expect((await call('create', admin, { name: '' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await call('create', admin, { name: 'x', workspace_id: 'chosen' })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect((await call('get', admin, { workspace_id: 'ws-nope' })).status).toBe(404);
    expect((await call('update', admin, { workspace_id: 'ws-1', state: 'DISABLED' })).status).toBe(400);
  });

  it('disable refuses grants and revokes the tokens of that workspace at once; enable lets grants again', async () => {
    const ws = (await call('create', admin, { name: 'to-disable' })).body.workspace_id;
    await t.admin.createUser({ domainId: 'd1', userId: 'ws-user', password: 'password-1', roleType: 'WORKSPACE_OWNER', workspaceId: ws });
    const issued = await request(t.app).post('/identity/v2/token/issue').send({ domain_id: 'd1', credentials: { user_id: 'ws-user', password: 'password-1' } });
    const grant = () => request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: issued.body.refresh_token, scope: 'WORKSPACE', workspace_id: ws });
    const token = (await grant()).body.access_token;
    const pg = () => request(t.app).post('/identity/v2/project-group/list').set('Authorization', `Bearer ${token}`).send({});
    expect((await pg()).status).toBe(200);

    const disabled = await call('disable', admin, { workspace_id: ws });
    expect(disabled.body).toMatchObject({ state: 'DISABLED', changed_at: expect.stringMatching(/Z$/) });
    expect((await pg()).status).toBe(401);
    expect((await grant()).body.error.code).toBe('ERROR_WORKSPACE_STATE');

    expect((await call('enable', admin, { workspace_id: ws })).body.state).toBe('ENABLED');
    const again = (await grant()).body.access_token;
    expect((await request(t.app).post('/identity/v2/project-group/list').set('Authorization', `Bearer ${again}`).send({})).status).toBe(200);
    // The token from before the disable stays revoked.
    expect((await pg()).status).toBe(401);
  });

  it('delete removes the role bindings, projects and groups of the workspace and revokes its tokens', async () => {
    const ws = (await call('create', admin, { name: 'to-delete' })).body.workspace_id;
    await t.admin.createUser({ domainId: 'd1', userId: 'del-owner', password: 'password-1', roleType: 'WORKSPACE_OWNER', workspaceId: ws });
    await t.admin.createProject({ domainId: 'd1', workspaceId: ws, projectId: 'p-del', name: 'p' });
    const wsOwner = await bearer({ domainId: 'd1', workspaceId: ws, roleType: 'WORKSPACE_OWNER', userId: 'del-owner' });
    await request(t.app).post('/identity/v2/project-group/create').set('Authorization', wsOwner).send({ name: 'g' });
    await new Promise((r) => setTimeout(r, 2));
    expect((await call('delete', admin, { workspace_id: ws, force: true })).body).toEqual({});
    expect((await call('get', admin, { workspace_id: ws })).status).toBe(404);
    expect(await t.prisma.roleBinding.count({ where: { domain_id: 'd1', workspace_id: ws } })).toBe(0);
    expect(await t.prisma.project.count({ where: { domain_id: 'd1', workspace_id: ws } })).toBe(0);
    expect(await t.prisma.projectGroup.count({ where: { domain_id: 'd1', workspace_id: ws } })).toBe(0);
    expect((await request(t.app).post('/identity/v2/project-group/list').set('Authorization', wsOwner).send({})).status).toBe(401);
    const dir = new DirectoryClient(t.deps.redis, t.deps.redisPrefix);
    expect(await dir.getProject('d1', 'p-del')).toBeUndefined();
    expect(await dir.getWorkspace('d1', ws)).toBeUndefined();
  });
});
