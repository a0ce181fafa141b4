import request from 'supertest';
import { bearer } from '@platform/testing';
import { DirectoryClient } from '@platform/directory';
import { createTestIdentity, seedDomain } from '../test-support';

describe('identity project-group', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let owner: string;
  let member: string;
  let domainAdmin: string;
  let otherDomain: string;
  let otherWorkspace: string;

  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1', 'ws-2']);
    await seedDomain(t.admin, 'd2');
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    domainAdmin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    otherWorkspace = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'admin' });
  });
  afterAll(() => t.close());

  const call = (path: string, auth: string, body: object = {}) =>
    request(t.app).post(`/identity/v2/project-group/${path}`).set('Authorization', auth).send(body);
  const create = async (name: string, parent?: string, auth = owner) => {
    const res = await call('create', auth, { name, tags: { team: name }, ...(parent && { parent_group_id: parent }) });
    expect(res.status).toBe(200);
    return res.body;
  };

  it('creates a group with every field of ProjectGroupInfo', async () => {
    const g = await create('root');
    expect(g).toEqual({
      project_group_id: expect.stringMatching(/^pg-[0-9a-f]{12}$/),
      name: 'root',
      tags: { team: 'root' },
      users: [],
      reference_id: '',
      is_managed: false,
      domain_id: 'd1',
      workspace_id: 'ws-1',
      parent_group_id: '',
      trusted_account_id: '',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      last_synced_at: '',
    });
    const child = await create('child', g.project_group_id);
    expect(child.parent_group_id).toBe(g.project_group_id);
  });

  it('validates create and refuses an unknown parent', async () => {
    expect((await call('create', owner, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await call('create', owner, { name: '' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await call('create', owner, { name: 'x', tags: 'nope' })).body.error.message).toContain('key = tags');
    const res = await call('create', owner, { name: 'x', parent_group_id: 'pg-nope' });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('parent_group_id');
  });

  it('needs a workspace owner to write and a token to do anything', async () => {
    expect((await call('create', member, { name: 'x' })).status).toBe(403);
    expect((await call('create', domainAdmin, { name: 'x' })).status).toBe(403);
    const none = await request(t.app).post('/identity/v2/project-group/list').send({});
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
  });

  it('updates name and tags', async () => {
    const g = await create('before');
    const res = await call('update', owner, { project_group_id: g.project_group_id, name: 'after', tags: { a: '1' } });
    expect(res.body).toMatchObject({ name: 'after', tags: { a: '1' } });
    expect((await call('update', owner, { project_group_id: 'pg-missing', name: 'x' })).status).toBe(404);
  });

  it('changes the parent, refusing itself, any descendant at any depth and other workspaces', async () => {
    const a = await create('a');
    const b = await create('b', a.project_group_id);
    const c = await create('c', b.project_group_id);
    const d = await create('d', c.project_group_id);
    const e = await create('e', a.project_group_id); // a second child: upstream follows only one per level
    const x = await create('x');

    const self = await call('change-parent-group', owner, { project_group_id: a.project_group_id, parent_group_id: a.project_group_id });
    expect(self.status).toBe(400);
    for (const below of [b, c, d, e]) {
      const res = await call('change-parent-group', owner, { project_group_id: a.project_group_id, parent_group_id: below.project_group_id });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('ERROR_NOT_ALLOWED_TO_CHANGE_PARENT_GROUP_TO_SUB_PROJECT_GROUP');
    }
    const moved = await call('change-parent-group', owner, { project_group_id: c.project_group_id, parent_group_id: x.project_group_id });
    expect(moved.status).toBe(200);
    expect(moved.body.parent_group_id).toBe(x.project_group_id);
    // Now x is above c and d: x may not move under d.
    expect((await call('change-parent-group', owner, { project_group_id: x.project_group_id, parent_group_id: d.project_group_id })).status).toBe(400);

    const foreign = await create('foreign', undefined, otherWorkspace);
    const cross = await call('change-parent-group', owner, { project_group_id: a.project_group_id, parent_group_id: foreign.project_group_id });
    expect(cross.status).toBe(404);
  });

  it('never closes a cycle under concurrent moves', async () => {
    const p = await create('p');
    const q = await create('q');
    const [r1, r2] = await Promise.all([
      call('change-parent-group', owner, { project_group_id: p.project_group_id, parent_group_id: q.project_group_id }),
      call('change-parent-group', owner, { project_group_id: q.project_group_id, parent_group_id: p.project_group_id }),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 400]);
  });

  it('refuses to delete a group with children, then deletes it', async () => {
    const parent = await create('parent');
    const child = await create('kid', parent.project_group_id);
    const refused = await call('delete', owner, { project_group_id: parent.project_group_id });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('ERROR_RELATED_PROJECT_GROUP_EXIST');
    expect((await call('delete', owner, { project_group_id: child.project_group_id })).body).toEqual({});
    expect((await call('delete', owner, { project_group_id: parent.project_group_id })).status).toBe(200);
    expect((await call('get', owner, { project_group_id: parent.project_group_id })).status).toBe(404);
  });

  it('refuses to delete a group that holds projects', async () => {
    const g = await create('with-project');
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'proj-1', name: 'p', projectGroupId: g.project_group_id });
    const res = await call('delete', owner, { project_group_id: g.project_group_id });
    expect(res.body.error.code).toBe('ERROR_RELATED_PROJECT_EXIST');
  });

  it('adds and removes users with set semantics, workspace users only', async () => {
    const g = await create('team');
    const id = g.project_group_id;
    let res = await call('add-users', owner, { project_group_id: id, users: ['member', 'owner', 'member'] });
    expect(res.body.users).toEqual(['member', 'owner']);
    res = await call('add-users', owner, { project_group_id: id, users: ['member', 'admin'] });
    expect(res.body.users).toEqual(['admin', 'member', 'owner']);
    const stranger = await call('add-users', owner, { project_group_id: id, users: ['loner'] });
    expect(stranger.status).toBe(404);
    expect(stranger.body.error.message).toContain('loner');
    expect((await call('add-users', owner, { project_group_id: id, users: ['ghost'] })).status).toBe(404);
    expect((await call('add-users', owner, { project_group_id: id, users: [] })).status).toBe(400);
    res = await call('remove-users', owner, { project_group_id: id, users: ['owner', 'nobody'] });
    expect(res.body.users).toEqual(['admin', 'member']);
  });

  it('shows a member only the groups they belong to', async () => {
    const mine = await create('mine');
    const notMine = await create('not-mine');
    await call('add-users', owner, { project_group_id: mine.project_group_id, users: ['member'] });
    expect((await call('get', member, { project_group_id: mine.project_group_id })).status).toBe(200);
    expect((await call('get', member, { project_group_id: notMine.project_group_id })).status).toBe(404);
    const list = await call('list', member, {});
    expect(list.body.results.every((g: any) => g.users.includes('member'))).toBe(true);
    expect(list.body.results.map((g: any) => g.name)).toContain('mine');
  });

  it('hides everything from another domain and another workspace', async () => {
    const g = await create('secret');
    for (const auth of [otherDomain, otherWorkspace]) {
      expect((await call('get', auth, { project_group_id: g.project_group_id })).status).toBe(404);
      expect((await call('update', auth, { project_group_id: g.project_group_id, name: 'pwned' })).status).toBe(404);
      expect((await call('delete', auth, { project_group_id: g.project_group_id })).status).toBe(404);
      const list = await call('list', auth, { name: 'secret' });
      expect(list.body).toEqual({ results: [], total_count: 0 });
    }
  });

  it('lists with filter fields, the query DSL and paging; a domain admin sees every workspace', async () => {
    for (let i = 0; i < 5; i++) await create(`page-${i}`);
    const byName = await call('list', owner, { name: 'page-3' });
    expect(byName.body.total_count).toBe(1);
    const page = await call('list', owner, {
      query: { filter: [{ key: 'name', value: 'page-', operator: 'contain' }], sort: [{ key: 'name', desc: true }], page: { start: 2, limit: 2 } },
    });
    expect(page.body.total_count).toBe(5);
    expect(page.body.results.map((g: any) => g.name)).toEqual(['page-3', 'page-2']);
    const only = await call('list', owner, { query: { filter: [{ k: 'name', v: 'page-0', o: 'eq' }], only: ['project_group_id', 'name'] } });
    expect(Object.keys(only.body.results[0]).sort()).toEqual(['name', 'project_group_id']);
    const admin = await call('list', domainAdmin, {});
    const workspaces = new Set(admin.body.results.map((g: any) => g.workspace_id));
    expect([...workspaces].sort()).toEqual(['ws-1', 'ws-2']);
    const bad = await call('list', owner, { query: { filter: [{ key: 'nope', value: 1, operator: 'eq' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('nope');
  });

  it('answers stat', async () => {
    const res = await call('stat', owner, { query: { aggregate: [{ group: { keys: [{ key: 'workspace_id', name: 'workspace' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([{ workspace: 'ws-1', n: expect.any(Number) }]);
    expect((await call('stat', owner, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
  });

  it('publishes groups and projects to the directory other modules read', async () => {
    const g = await create('dir-top');
    const sub = await create('dir-sub', g.project_group_id);
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'proj-dir', name: 'p', projectGroupId: sub.project_group_id });
    // The admin CLI publishes after creating a project; a group change publishes too.
    await create('dir-other');
    const client = new DirectoryClient(t.deps.redis, t.deps.redisPrefix);
    expect(await client.projectsInGroup('d1', g.project_group_id)).toEqual(['proj-dir']);
    expect((await client.getProject('d1', 'proj-dir'))?.workspace_id).toBe('ws-1');
    expect(await client.getProject('d2', 'proj-dir')).toBeUndefined();
    expect(await client.getWorkspace('d1', 'ws-2')).toEqual({ workspace_id: 'ws-2', name: 'ws-2' });
  });
});
