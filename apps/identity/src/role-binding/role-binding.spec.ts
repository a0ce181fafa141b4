import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';

describe('identity role and role-binding', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  let owner: string;
  let member: string;
  let owner2: string;
  let otherAdmin: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1', 'ws-2']);
    await seedDomain(t.admin, 'd2');
    for (const u of ['newbie', 'newbie2', 'outsider']) await t.admin.createUser({ domainId: 'd1', userId: u, password: 'password-1' });
    await t.admin.createUser({ domainId: 'd1', userId: 'owner2', password: 'password-1', roleType: 'WORKSPACE_OWNER', workspaceId: 'ws-2' });
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    owner2 = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_OWNER', userId: 'owner2' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    for (const b of await t.prisma.roleBinding.findMany({ where: { domain_id: 'd1' } })) ids[`${b.user_id}@${b.workspace_id || 'domain'}`] = b.role_binding_id;
  });
  afterAll(() => t.close());

  const rb = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/role-binding/${verb}`).set('Authorization', auth).send(body);
  const role = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/role/${verb}`).set('Authorization', auth).send(body);

  it('role: the three managed roles, for every workspace role; a USER token is refused', async () => {
    for (const auth of [admin, owner, member]) {
      const list = await role('list', auth, { query: { sort: [{ key: 'role_id' }] } });
      expect(list.body.results.map((r: { role_id: string }) => r.role_id)).toEqual(['managed-domain-admin', 'managed-workspace-member', 'managed-workspace-owner']);
    }
    expect((await role('get', admin, { role_id: 'managed-workspace-owner' })).body).toEqual({
      role_id: 'managed-workspace-owner',
      name: 'Workspace Owner',
      role_type: 'WORKSPACE_OWNER',
      permissions: ['*'],
      page_access: ['*'],
      tags: {},
      is_managed: true,
      state: 'ENABLED',
      domain_id: 'd1',
      created_at: '',
      updated_at: '',
    });
    expect((await role('list', admin, { role_type: 'DOMAIN_ADMIN' })).body.total_count).toBe(1);
    expect((await role('get', admin, { role_id: 'custom-1' })).status).toBe(404);
    expect((await role('list', await bearer({ domainId: 'd1', roleType: 'USER', userId: 'loner' }), {})).status).toBe(403);
  });

  it('a DOMAIN_ADMIN binds anyone in the domain, in any workspace, and to DOMAIN_ADMIN', async () => {
    const res = await rb('create', admin, { user_id: 'newbie', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: 'ws-2' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      role_binding_id: expect.stringMatching(/^rb-[0-9a-f]{12}$/),
      role_type: 'WORKSPACE_MEMBER',
      resource_group: 'WORKSPACE',
      domain_id: 'd1',
      workspace_group_id: '',
      workspace_id: 'ws-2',
      role_id: 'managed-workspace-member',
      user_id: 'newbie',
      created_at: expect.stringMatching(/Z$/),
    });
    ids['newbie@ws-2'] = res.body.role_binding_id;
    const da = await rb('create', admin, { user_id: 'newbie2', role_id: 'managed-domain-admin', resource_group: 'DOMAIN' });
    expect(da.body).toMatchObject({ role_type: 'DOMAIN_ADMIN', resource_group: 'DOMAIN', workspace_id: '' });
    ids['newbie2@domain'] = da.body.role_binding_id;
  });

  it('refuses mismatched roles and groups, unknown users, workspaces and roles, and duplicates', async () => {
    const code = async (body: object) => {
      const res = await rb('create', admin, body);
      return `${res.status} ${res.body.error?.code}`;
    };
    expect(await code({ user_id: 'outsider', role_id: 'managed-domain-admin', resource_group: 'WORKSPACE', workspace_id: 'ws-1' })).toBe('400 ERROR_NOT_ALLOWED_ROLE_TYPE');
    expect(await code({ user_id: 'outsider', role_id: 'managed-workspace-owner', resource_group: 'DOMAIN' })).toBe('400 ERROR_NOT_ALLOWED_ROLE_TYPE');
    expect(await code({ user_id: 'outsider', role_id: 'managed-workspace-owner', resource_group: 'WORKSPACE' })).toBe('400 ERROR_REQUIRED_PARAMETER');
    expect(await code({ user_id: 'nobody', role_id: 'managed-workspace-owner', resource_group: 'WORKSPACE', workspace_id: 'ws-1' })).toBe('404 ERROR_NOT_FOUND');
    expect(await code({ user_id: 'outsider', role_id: 'managed-workspace-owner', resource_group: 'WORKSPACE', workspace_id: 'ws-9' })).toBe('404 ERROR_NOT_FOUND');
    expect(await code({ user_id: 'outsider', role_id: 'custom-role', resource_group: 'WORKSPACE', workspace_id: 'ws-1' })).toBe('404 ERROR_NOT_FOUND');
    expect(await code({ user_id: 'member', role_id: 'managed-workspace-owner', resource_group: 'WORKSPACE', workspace_id: 'ws-1' })).toBe('400 ERROR_DUPLICATED_WORKSPACE_ROLE_BINDING');
    expect(await code({ user_id: 'admin', role_id: 'managed-domain-admin', resource_group: 'DOMAIN' })).toBe('400 ERROR_DUPLICATED_ROLE_BINDING');
    expect(await code({ user_id: 'outsider', role_id: 'managed-workspace-owner', resource_group: 'PROJECT', workspace_id: 'ws-1' })).toBe('400 ERROR_INVALID_PARAMETER');
    // Concurrent creates of one binding: exactly one wins.
    const both = await Promise.all([1, 2].map(() => rb('create', admin, { user_id: 'outsider', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: 'ws-1' })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 400]);
    await rb('delete', admin, { role_binding_id: both.find((r) => r.status === 200)!.body.role_binding_id });
  });

  it('a WORKSPACE_OWNER binds users in their own workspace only, never to DOMAIN_ADMIN; a member cannot bind', async () => {
    const own = await rb('create', owner, { user_id: 'outsider', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE' });
    expect(own.body).toMatchObject({ workspace_id: 'ws-1', role_type: 'WORKSPACE_MEMBER' });
    ids['outsider@ws-1'] = own.body.role_binding_id;
    expect((await rb('create', owner, { user_id: 'outsider', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: 'ws-2' })).status).toBe(403);
    expect((await rb('create', owner, { user_id: 'outsider', role_id: 'managed-domain-admin', resource_group: 'DOMAIN' })).status).toBe(403);
    expect((await rb('create', owner, { user_id: 'outsider', role_id: 'managed-domain-admin', resource_group: 'WORKSPACE' })).body.error.code).toBe('ERROR_NOT_ALLOWED_ROLE_TYPE');
    expect((await rb('update-role', owner, { role_binding_id: ids['outsider@ws-1'], role_id: 'managed-domain-admin' })).body.error.code).toBe('ERROR_NOT_ALLOWED_ROLE_TYPE');
    // Another workspace's and the domain's bindings are not there for them.
    expect((await rb('update-role', owner, { role_binding_id: ids['owner2@ws-2'], role_id: 'managed-workspace-member' })).status).toBe(404);
    expect((await rb('delete', owner, { role_binding_id: ids['admin@domain'] })).status).toBe(404);
    expect((await rb('get', owner2, { role_binding_id: ids['outsider@ws-1'] })).status).toBe(404);
    for (const [verb, body] of [
      ['create', { user_id: 'outsider', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE' }],
      ['update-role', { role_binding_id: ids['outsider@ws-1'], role_id: 'managed-workspace-owner' }],
      ['delete', { role_binding_id: ids['outsider@ws-1'] }],
    ] as const) {
      expect([verb, (await rb(verb, member, body)).status]).toEqual([verb, 403]);
    }
  });

  it('reads: DOMAIN_ADMIN the domain, a workspace token its workspace, another domain nothing', async () => {
    const all = await rb('list', admin, {});
    expect(all.body.results.every((b: { domain_id: string }) => b.domain_id === 'd1')).toBe(true);
    expect(all.body.results.some((b: { resource_group: string }) => b.resource_group === 'DOMAIN')).toBe(true);
    const ws1 = await rb('list', member, {});
    expect(new Set(ws1.body.results.map((b: { workspace_id: string }) => b.workspace_id))).toEqual(new Set(['ws-1']));
    expect((await rb('list', owner, { workspace_id: 'ws-2' })).body.total_count).toBe(0);
    expect((await rb('get', member, { role_binding_id: ids['member@ws-1'] })).body.user_id).toBe('member');
    expect((await rb('get', otherAdmin, { role_binding_id: ids['member@ws-1'] })).status).toBe(404);
    expect((await rb('list', otherAdmin, { user_id: 'member' })).body.results.every((b: { domain_id: string }) => b.domain_id === 'd2')).toBe(true);
    const stat = await rb('stat', owner, { query: { distinct: 'workspace_id' } });
    expect(stat.body.results).toEqual(['ws-1']);
  });

  it('update-role changes the role and revokes the user\'s tokens; they grant again with the new role', async () => {
    const issued = await request(t.app).post('/identity/v2/token/issue').send({ domain_id: 'd1', credentials: { user_id: 'outsider', password: 'password-1' } });
    const grant = () => request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: issued.body.refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-1' });
    const before = (await grant()).body;
    expect(before.role_type).toBe('WORKSPACE_MEMBER');
    const create = () => request(t.app).post('/identity/v2/project-group/create').set('Authorization', `Bearer ${before.access_token}`).send({ name: 'by-outsider' });
    expect((await create()).status).toBe(403);
    const updated = await rb('update-role', owner, { role_binding_id: ids['outsider@ws-1'], role_id: 'managed-workspace-owner' });
    expect(updated.body).toMatchObject({ role_type: 'WORKSPACE_OWNER', role_id: 'managed-workspace-owner' });
    expect((await create()).status).toBe(401);
    const after = (await grant()).body;
    expect(after.role_type).toBe('WORKSPACE_OWNER');
    expect((await request(t.app).post('/identity/v2/project-group/create').set('Authorization', `Bearer ${after.access_token}`).send({ name: 'by-outsider' })).status).toBe(200);
  });

  it('nobody changes or deletes their own binding; the last DOMAIN_ADMIN binding stays', async () => {
    const self = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    expect((await rb('delete', self, { role_binding_id: ids['owner@ws-1'] })).body.error.code).toBe('ERROR_NOT_ALLOWED_TO_UPDATE_OR_DELETE_ROLE_BY_SELF');
    expect((await rb('update-role', self, { role_binding_id: ids['owner@ws-1'], role_id: 'managed-workspace-member' })).body.error.code).toBe(
      'ERROR_NOT_ALLOWED_TO_UPDATE_OR_DELETE_ROLE_BY_SELF',
    );
    // d2 has one admin: its binding cannot go (asked by another admin token of d2, not the admin themself).
    const d2Binding = (await t.prisma.roleBinding.findFirst({ where: { domain_id: 'd2', role_type: 'DOMAIN_ADMIN' } }))!.role_binding_id;
    const d2Other = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'break-glass' });
    expect((await rb('delete', d2Other, { role_binding_id: d2Binding })).body.error.code).toBe('ERROR_LAST_DOMAIN_ADMIN_CANNOT_DELETE');
    // d1 has two: newbie2's can go.
    expect((await rb('delete', admin, { role_binding_id: ids['newbie2@domain'] })).body).toEqual({});
  });

  it('delete takes the user out of the workspace\'s projects and groups, republishes, and revokes their tokens', async () => {
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-2', projectId: 'p-ws2', name: 'ws2 project' });
    await t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-ws2', users: ['newbie'] });
    const token = await bearer({ domainId: 'd1', workspaceId: 'ws-2', roleType: 'WORKSPACE_MEMBER', userId: 'newbie' });
    const see = () => request(t.app).post('/identity/v2/project/list').set('Authorization', token).send({});
    expect((await see()).body.total_count).toBe(1);
    await new Promise((r) => setTimeout(r, 2));
    expect((await rb('delete', owner2, { role_binding_id: ids['newbie@ws-2'] })).body).toEqual({});
    expect((await see()).status).toBe(401);
    expect((await t.prisma.project.findUnique({ where: { domain_id_project_id: { domain_id: 'd1', project_id: 'p-ws2' } } }))?.users).toEqual([]);
  });
});
