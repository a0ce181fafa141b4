import request from 'supertest';
import { bearer } from '@platform/testing';
import { DirectoryClient } from '@platform/directory';
import { createTestIdentity, seedDomain } from '../test-support';

describe('identity project', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  let owner: string;
  let member: string;
  let member2: string;
  let ws2Owner: string;
  let otherDomain: string;
  let dir: DirectoryClient;
  let group = '';
  let child = '';

  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1', 'ws-2']);
    await seedDomain(t.admin, 'd2');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    member2 = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member2' });
    ws2Owner = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'admin' });
    otherDomain = await bearer({ domainId: 'd2', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    dir = new DirectoryClient(t.deps.redis, t.deps.redisPrefix);
    const pg = (body: object) => request(t.app).post('/identity/v2/project-group/create').set('Authorization', owner).send(body);
    group = (await pg({ name: 'platform' })).body.project_group_id;
    child = (await pg({ name: 'sre', parent_group_id: group })).body.project_group_id;
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/project/${verb}`).set('Authorization', auth).send(body);
  const create = async (body: object, auth = owner) => {
    const res = await call('create', auth, body);
    expect(res.status).toBe(200);
    return res.body;
  };
  const names = (res: request.Response) => res.body.results.map((p: { name: string }) => p.name).sort();

  it('creates a project in the token\'s workspace with every field of ProjectInfo, and publishes it', async () => {
    const p = await create({ name: 'payments', tags: { env: 'prod' }, project_group_id: group });
    expect(p).toEqual({
      project_id: expect.stringMatching(/^project-[0-9a-f]{12}$/),
      name: 'payments',
      project_type: 'PRIVATE',
      tags: { env: 'prod' },
      users: [],
      created_by: 'owner',
      reference_id: '',
      is_managed: false,
      domain_id: 'd1',
      workspace_id: 'ws-1',
      project_group_id: group,
      trusted_account_id: '',
      created_at: expect.stringMatching(/Z$/),
      last_synced_at: '',
    });
    expect(await dir.getProject('d1', p.project_id)).toMatchObject({ workspace_id: 'ws-1', project_group_id: group, name: 'payments' });
    await create({ name: 'billing', project_group_id: child });
    await create({ name: 'loose' });
    expect((await call('create', ws2Owner, { name: 'elsewhere' })).body.workspace_id).toBe('ws-2');
  });

  it('validates, and refuses a group of another workspace or domain', async () => {
    expect((await call('create', owner, {})).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    expect((await call('create', owner, { name: 'x', project_type: 'SECRET' })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect((await call('create', owner, { name: 'x', workspace_id: 'ws-2' })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect((await call('create', ws2Owner, { name: 'x', project_group_id: group })).status).toBe(404);
    expect((await call('create', otherDomain, { name: 'x', project_group_id: group })).status).toBe(404);
  });

  it('writes are a workspace owner\'s: a member (403), a domain-scoped admin (403), another workspace and domain (404)', async () => {
    const p = (await call('list', owner, { name: 'loose' })).body.results[0];
    for (const [verb, body] of [
      ['create', { name: 'x' }],
      ['update', { project_id: p.project_id, name: 'x' }],
      ['update-project-type', { project_id: p.project_id, project_type: 'PUBLIC' }],
      ['change-project-group', { project_id: p.project_id, project_group_id: group }],
      ['delete', { project_id: p.project_id }],
      ['add-users', { project_id: p.project_id, users: ['member'] }],
      ['remove-users', { project_id: p.project_id, users: ['member'] }],
    ] as const) {
      expect([verb, (await call(verb, member, body)).status]).toEqual([verb, 403]);
      expect([verb, (await call(verb, admin, body)).status]).toEqual([verb, 403]);
      if (verb !== 'create') {
        expect([verb, (await call(verb, ws2Owner, body)).status]).toEqual([verb, 404]);
        expect([verb, (await call(verb, otherDomain, body)).status]).toEqual([verb, 404]);
      }
    }
  });

  it('reads: DOMAIN_ADMIN every workspace, an owner theirs, a member only their projects (own, group, PUBLIC)', async () => {
    expect(names(await call('list', admin, {}))).toEqual(['billing', 'elsewhere', 'loose', 'payments']);
    expect(names(await call('list', owner, {}))).toEqual(['billing', 'loose', 'payments']);
    expect(names(await call('list', member, {}))).toEqual([]);
    const loose = (await call('list', owner, { name: 'loose' })).body.results[0];
    expect((await call('get', member, { project_id: loose.project_id })).status).toBe(404);
    // Project users.
    const added = await call('add-users', owner, { project_id: loose.project_id, users: ['member', 'member'] });
    expect(added.body.users).toEqual(['member']);
    expect(names(await call('list', member, {}))).toEqual(['loose']);
    expect((await call('get', member, { project_id: loose.project_id })).body.name).toBe('loose');
    // Group users see the group's projects and those of its descendants.
    await request(t.app).post('/identity/v2/project-group/add-users').set('Authorization', owner).send({ project_group_id: group, users: ['member2'] });
    expect(names(await call('list', member2, {}))).toEqual(['billing', 'payments']);
    // PUBLIC: every member of the workspace.
    const billing = (await call('list', owner, { name: 'billing' })).body.results[0];
    expect((await call('update-project-type', owner, { project_id: billing.project_id, project_type: 'PUBLIC' })).body.project_type).toBe('PUBLIC');
    expect(names(await call('list', member, {}))).toEqual(['billing', 'loose']);
    // The member rule holds through every read path.
    expect((await call('list', member, { query: { filter_or: [{ k: 'name', v: 'payments', o: 'eq' }, { k: 'name', v: 'loose', o: 'eq' }] } })).body.total_count).toBe(1);
    expect((await call('list', member, { query: { keyword: 'pay' } })).body.total_count).toBe(0);
    expect((await call('stat', member, { query: { distinct: 'name' } })).body.results.sort()).toEqual(['billing', 'loose']);
    expect((await call('list', member, { project_group_id: group, include_children: true })).body.total_count).toBe(1);
    expect((await call('get', otherDomain, { project_id: loose.project_id })).status).toBe(404);
  });

  it('add-users needs users of the workspace; remove-users; list by user_id, group and children', async () => {
    const loose = (await call('list', owner, { name: 'loose' })).body.results[0];
    const stranger = await call('add-users', owner, { project_id: loose.project_id, users: ['loner'] });
    expect([stranger.status, stranger.body.error.message]).toEqual([404, expect.stringContaining('loner')]);
    expect((await call('add-users', owner, { project_id: loose.project_id, users: ['__proto__'] })).status).toBe(400);
    expect((await call('add-users', owner, { project_id: loose.project_id, users: [] })).status).toBe(400);
    expect(names(await call('list', owner, { user_id: 'member' }))).toEqual(['loose']);
    expect((await call('remove-users', owner, { project_id: loose.project_id, users: ['member', 'nobody'] })).body.users).toEqual([]);
    expect(names(await call('list', owner, { project_group_id: group }))).toEqual(['payments']);
    expect(names(await call('list', owner, { project_group_id: group, include_children: true }))).toEqual(['billing', 'payments']);
  });

  it('update, change-project-group and delete republish the directory', async () => {
    const loose = (await call('list', owner, { name: 'loose' })).body.results[0];
    expect((await call('update', owner, { project_id: loose.project_id, name: 'renamed', tags: { a: 'b' } })).body).toMatchObject({ name: 'renamed', tags: { a: 'b' } });
    expect((await dir.getProject('d1', loose.project_id))?.name).toBe('renamed');
    expect((await call('change-project-group', owner, { project_id: loose.project_id, project_group_id: child })).body.project_group_id).toBe(child);
    expect((await dir.getProject('d1', loose.project_id))?.project_group_id).toBe(child);
    expect((await call('change-project-group', owner, { project_id: loose.project_id, project_group_id: 'pg-nope' })).status).toBe(404);
    // A group with projects cannot be deleted; once its project is gone, it can.
    const del = () => request(t.app).post('/identity/v2/project-group/delete').set('Authorization', owner).send({ project_group_id: child });
    expect((await del()).body.error.code).toBe('ERROR_RELATED_PROJECT_EXIST');
    for (const name of ['renamed', 'billing']) {
      const p = (await call('list', owner, { name })).body.results[0];
      expect((await call('delete', owner, { project_id: p.project_id })).body).toEqual({});
      expect(await dir.getProject('d1', p.project_id)).toBeUndefined();
    }
    expect((await del()).status).toBe(200);
  });
});
