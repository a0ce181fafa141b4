import { createPublicKey } from 'node:crypto';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { TokenVerifier } from '@platform/auth';
import { AccessRevocations } from '@platform/directory';
import { bearer, testKeys } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';
import { toRoleInfo } from './responses';
import { managedRoleRows } from './managed';

/** Custom roles (issue #29 §2): upstream's Role API, bindings to custom roles, the token's permissions, disable. */
describe('identity custom roles', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  let owner: string;
  let member: string;
  let loner: string;
  let otherAdmin: string;
  let otherModule: TokenVerifier;
  let otherRevocations: AccessRevocations;

  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1', 'ws-2']);
    await seedDomain(t.admin, 'd2');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    loner = await bearer({ domainId: 'd1', roleType: 'USER', userId: 'loner' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    otherRevocations = new AccessRevocations(t.deps.redis, { prefix: t.deps.redisPrefix });
    await otherRevocations.start();
    otherModule = new TokenVerifier(createPublicKey(testKeys.publicPem)).useRevocations(otherRevocations);
  });
  afterAll(async () => {
    otherRevocations.stop();
    await t.close();
  });

  const role = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/role/${verb}`).set('Authorization', auth).send(body);
  const rb = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/role-binding/${verb}`).set('Authorization', auth).send(body);
  const login = async (user: string) => {
    const res = await request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: user, password: 'password-1' }, domain_id: 'd1' });
    expect(res.status).toBe(200);
    return res.body.refresh_token as string;
  };
  const grant = (refresh: string, body: object) => request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: refresh, ...body });
  const works = async (token: string) => (await request(t.app).post('/identity/v2/role/list').set('Authorization', `Bearer ${token}`).send({})).status !== 401;
  const worksElsewhere = (token: string) => otherModule.authenticate(token).then(() => true, () => false);

  it('role_view answers the managed roles exactly as the built-in rows (the answers of before custom roles)', async () => {
    const list = await role('list', admin, { query: { filter: [{ k: 'is_managed', v: true, o: 'eq' }] } });
    expect(list.status).toBe(200);
    const byId = (a: { role_id: string }, b: { role_id: string }) => a.role_id.localeCompare(b.role_id);
    expect(list.body.results.sort(byId)).toEqual(managedRoleRows('d1').map(toRoleInfo).sort(byId));
    expect((await role('get', member, { role_id: 'managed-workspace-member' })).body).toEqual(toRoleInfo(managedRoleRows('d1')[2]));
  });

  it('create: DOMAIN_ADMIN only; fields as upstream; names unique in the domain; permissions well-formed', async () => {
    const res = await role('create', admin, { name: 'Inventory reader', role_type: 'WORKSPACE_MEMBER', permissions: ['inventory:', 'inventory:'], page_access: ['inventory.*'], tags: { team: 'ops' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      role_id: expect.stringMatching(/^role-[0-9a-f]{12}$/),
      name: 'Inventory reader',
      role_type: 'WORKSPACE_MEMBER',
      permissions: ['inventory:'],
      page_access: ['inventory.*'],
      tags: { team: 'ops' },
      is_managed: false,
      state: 'ENABLED',
      domain_id: 'd1',
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    });
    for (const auth of [owner, member, loner]) expect((await role('create', auth, { name: 'x', role_type: 'WORKSPACE_MEMBER' })).status).toBe(403);
    const dup = await role('create', admin, { name: 'Inventory reader', role_type: 'WORKSPACE_OWNER' });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'ERROR_ALREADY_EXISTS']);
    expect((await role('create', admin, { name: 'Domain Admin', role_type: 'DOMAIN_ADMIN' })).status).toBe(409);
    // Another domain may use the same name.
    expect((await role('create', otherAdmin, { name: 'Inventory reader', role_type: 'WORKSPACE_MEMBER' })).status).toBe(200);
    expect((await role('create', admin, { name: 'empty permission', role_type: 'WORKSPACE_MEMBER', permissions: [''] })).status).toBe(400);
    for (const bad of [['inventory'], ['a b:c'], ['__proto__'], Array.from({ length: 201 }, (_, i) => `inventory:X${i}`)]) {
      const r = await role('create', admin, { name: `bad-${bad.length}-${bad[0]}`, role_type: 'WORKSPACE_MEMBER', permissions: bad });
      expect([r.status, r.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    }
    expect((await role('create', admin, { name: 'sys', role_type: 'SYSTEM_ADMIN' })).status).toBe(400);
    expect((await role('create', admin, { role_type: 'WORKSPACE_MEMBER' })).status).toBe(400);
  });

  it('managed roles cannot be updated, disabled, enabled or deleted (403 as upstream)', async () => {
    for (const verb of ['update', 'disable', 'enable', 'delete']) {
      const r = await role(verb, admin, { role_id: 'managed-workspace-owner', ...(verb === 'update' && { name: 'Mine now' }) });
      expect([verb, r.status, r.body.error.code]).toEqual([verb, 403, 'ERROR_PERMISSION_DENIED']);
    }
    expect((await role('get', admin, { role_id: 'managed-workspace-owner' })).body.name).toBe('Workspace Owner');
  });

  it('get, list, stat and list-basic-role: the managed roles and the domain\'s own, never another domain\'s', async () => {
    const created = await role('create', admin, { name: 'Auditor', role_type: 'WORKSPACE_MEMBER', permissions: ['cost-analysis:', 'inventory:CloudService.read'] });
    const id = created.body.role_id;
    for (const auth of [admin, owner, member]) expect((await role('get', auth, { role_id: id })).body.name).toBe('Auditor');
    expect((await role('get', loner, { role_id: id })).status).toBe(403);
    // Another domain: not found, whatever the verb.
    for (const verb of ['get', 'update', 'enable', 'disable', 'delete']) {
      const r = await role(verb, otherAdmin, { role_id: id, ...(verb === 'update' && { name: 'taken' }) });
      expect([verb, r.status, r.body.error?.code]).toEqual([verb, 404, 'ERROR_NOT_FOUND']);
    }
    const d2 = await role('list', otherAdmin, {});
    expect(d2.body.results.map((r: { role_id: string }) => r.role_id)).not.toContain(id);
    expect(d2.body.results.every((r: { domain_id: string }) => r.domain_id === 'd2')).toBe(true);
    // The query DSL over managed and custom roles alike.
    const custom = await role('list', admin, { query: { filter: [{ k: 'is_managed', v: false, o: 'eq' }], sort: [{ key: 'name' }], only: ['role_id', 'name'] } });
    expect(custom.body.results.map((r: { name: string }) => r.name)).toEqual(['Auditor', 'Inventory reader']);
    expect(Object.keys(custom.body.results[0]).sort()).toEqual(['name', 'role_id']);
    expect((await role('list', admin, { query: { keyword: 'audit' } })).body.total_count).toBe(1);
    expect((await role('list', admin, { role_type: 'WORKSPACE_MEMBER' })).body.total_count).toBe(3);
    expect((await role('list', admin, { query: { filter: [{ k: 'permissions', v: 'cost-analysis:', o: 'contain' }] } })).body.total_count).toBe(1);
    const stat = await role('stat', member, { query: { aggregate: [{ group: { keys: [{ key: 'is_managed', name: 'managed' }], fields: [{ operator: 'count', name: 'n' }] } }] } });
    expect(stat.status).toBe(200);
    expect(stat.body.results.sort((a: { managed: boolean }, b: { managed: boolean }) => Number(a.managed) - Number(b.managed))).toEqual([{ managed: false, n: 2 }, { managed: true, n: 3 }]);
    const badKey = await role('list', admin, { query: { filter: [{ k: 'nope', v: 1, o: 'eq' }] } });
    expect(badKey.status).toBe(400);
    // list-basic-role: any signed-in user, no permissions, page access or tags.
    const basic = await role('list-basic-role', loner, { query: { sort: [{ key: 'role_id' }] } });
    expect(basic.status).toBe(200);
    expect(basic.body.total_count).toBe(5);
    for (const r of basic.body.results) expect(Object.keys(r).sort()).toEqual(['created_at', 'domain_id', 'name', 'role_id', 'role_type', 'state', 'updated_at']);
  });

  it('update: name, permissions, page access, tags; new permissions end the tokens granted with the old ones', async () => {
    const created = await role('create', admin, { name: 'Changing', role_type: 'WORKSPACE_MEMBER', permissions: ['inventory:'] });
    const id = created.body.role_id;
    await t.admin.createUser({ domainId: 'd1', userId: 'changer', password: 'password-1' });
    expect((await rb('create', admin, { user_id: 'changer', role_id: id, resource_group: 'WORKSPACE', workspace_id: 'ws-1' })).status).toBe(200);
    const refresh = await login('changer');
    const before = (await grant(refresh, { scope: 'WORKSPACE', workspace_id: 'ws-1' })).body.access_token;
    expect(decodeJwt(before).permissions).toEqual(['inventory:']);
    // Tags and page access alone end nothing.
    const tagged = await role('update', admin, { role_id: id, tags: { a: 1 }, page_access: ['*'] });
    expect([tagged.status, tagged.body.tags, tagged.body.page_access]).toEqual([200, { a: 1 }, ['*']]);
    expect(await works(before)).toBe(true);
    const updated = await role('update', admin, { role_id: id, name: 'Changed', permissions: ['inventory:', 'identity:'] });
    expect(updated.body).toMatchObject({ name: 'Changed', permissions: ['inventory:', 'identity:'], tags: { a: 1 } });
    expect(await works(before)).toBe(false);
    expect(await worksElsewhere(before)).toBe(false);
    const after = (await grant(refresh, { scope: 'WORKSPACE', workspace_id: 'ws-1' })).body.access_token;
    expect(decodeJwt(after).permissions).toEqual(['inventory:', 'identity:']);
    expect(await works(after)).toBe(true);
    expect((await role('update', admin, { role_id: id, name: 'Auditor' })).status).toBe(409);
    expect((await role('update', owner, { role_id: id, name: 'x' })).status).toBe(403);
  });

  it('bindings: a custom role of the same domain whose type fits the group (create and update-role), never another domain\'s', async () => {
    const wsRole = (await role('create', admin, { name: 'WS helper', role_type: 'WORKSPACE_OWNER', permissions: ['identity:'] })).body.role_id;
    const daRole = (await role('create', admin, { name: 'Limited admin', role_type: 'DOMAIN_ADMIN', permissions: ['identity:User'] })).body.role_id;
    const foreign = (await role('create', otherAdmin, { name: 'Foreign', role_type: 'WORKSPACE_MEMBER' })).body.role_id;
    await t.admin.createUser({ domainId: 'd1', userId: 'binder', password: 'password-1' });
    const misfit = await rb('create', admin, { user_id: 'binder', role_id: wsRole, resource_group: 'DOMAIN' });
    expect([misfit.status, misfit.body.error.code]).toEqual([400, 'ERROR_NOT_ALLOWED_ROLE_TYPE']);
    expect((await rb('create', admin, { user_id: 'binder', role_id: daRole, resource_group: 'WORKSPACE', workspace_id: 'ws-2' })).body.error.code).toBe('ERROR_NOT_ALLOWED_ROLE_TYPE');
    const cross = await rb('create', admin, { user_id: 'binder', role_id: foreign, resource_group: 'WORKSPACE', workspace_id: 'ws-2' });
    expect([cross.status, cross.body.error.code]).toEqual([404, 'ERROR_NOT_FOUND']);
    // An owner binds in their workspace with a custom workspace role.
    const made = await rb('create', owner, { user_id: 'binder', role_id: wsRole, resource_group: 'WORKSPACE' });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ role_id: wsRole, role_type: 'WORKSPACE_OWNER', workspace_id: 'ws-1' });
    expect((await rb('update-role', owner, { role_binding_id: made.body.role_binding_id, role_id: foreign })).status).toBe(404);
    expect((await rb('update-role', owner, { role_binding_id: made.body.role_binding_id, role_id: daRole })).body.error.code).toBe('ERROR_NOT_ALLOWED_ROLE_TYPE');
    const back = await rb('update-role', owner, { role_binding_id: made.body.role_binding_id, role_id: 'managed-workspace-member' });
    expect(back.body).toMatchObject({ role_id: 'managed-workspace-member', role_type: 'WORKSPACE_MEMBER' });
    const again = await rb('update-role', owner, { role_binding_id: made.body.role_binding_id, role_id: wsRole });
    expect(again.body).toMatchObject({ role_id: wsRole, role_type: 'WORKSPACE_OWNER' });
    // A DOMAIN_ADMIN custom role: the DOMAIN token carries its permissions, and they are enforced.
    await t.admin.createUser({ domainId: 'd1', userId: 'limited', password: 'password-1' });
    expect((await rb('create', admin, { user_id: 'limited', role_id: daRole, resource_group: 'DOMAIN' })).status).toBe(200);
    const g = await grant(await login('limited'), { scope: 'DOMAIN' });
    expect(g.body).toMatchObject({ role_type: 'DOMAIN_ADMIN', role_id: daRole });
    const token = `Bearer ${g.body.access_token}`;
    expect(decodeJwt(g.body.access_token).permissions).toEqual(['identity:User']);
    expect((await request(t.app).post('/identity/v2/user/list').set('Authorization', token).send({})).status).toBe(200);
    const refused = await request(t.app).post('/identity/v2/workspace/list').set('Authorization', token).send({});
    expect([refused.status, refused.body.error.code]).toEqual([403, 'ERROR_PERMISSION_DENIED']);
    // Requested permissions narrow within the role's (prefix match), never widen.
    const narrowed = await grant(await login('limited'), { scope: 'DOMAIN', permissions: ['identity:User.read', 'identity:Workspace.read'] });
    expect(decodeJwt(narrowed.body.access_token).permissions).toEqual(['identity:User.read']);
    // A custom DOMAIN_ADMIN role never counts as the domain's last admin: 'admin' holds the only managed one.
    const ghost = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'ghost' });
    const lastDisable = await request(t.app).post('/identity/v2/user/disable').set('Authorization', ghost).send({ user_id: 'admin' });
    expect([lastDisable.status, lastDisable.body.error.code]).toEqual([400, 'ERROR_LAST_ADMIN_CANNOT_DISABLED_DELETED']);
    const adminBinding = await t.prisma.roleBinding.findFirstOrThrow({ where: { domain_id: 'd1', user_id: 'admin', workspace_id: '' } });
    const demote = await rb('update-role', ghost, { role_binding_id: adminBinding.role_binding_id, role_id: daRole });
    expect([demote.status, demote.body.error.code]).toEqual([400, 'ERROR_LAST_DOMAIN_ADMIN_CANNOT_DELETE']);
    // A refused change ends nothing: the admin's token still works.
    expect((await rb('get', admin, { role_binding_id: adminBinding.role_binding_id })).body.role_id).toBe('managed-domain-admin');
    const misfitChange = await rb('update-role', ghost, { role_binding_id: adminBinding.role_binding_id, role_id: wsRole });
    expect(misfitChange.status).toBe(400);
    expect((await role('list', admin)).status).toBe(200);
    // The custom admin's own binding can go: it keeps nobody administrable.
    const limitedBinding = await t.prisma.roleBinding.findFirstOrThrow({ where: { domain_id: 'd1', user_id: 'limited', workspace_id: '' } });
    expect((await rb('delete', ghost, { role_binding_id: limitedBinding.role_binding_id })).status).toBe(200);
  });

  it('an empty permission list gives the role type\'s rights; an inventory-only role carries only inventory:', async () => {
    const open = (await role('create', admin, { name: 'Open member', role_type: 'WORKSPACE_MEMBER' })).body.role_id;
    const inv = (await role('create', admin, { name: 'Inventory only', role_type: 'WORKSPACE_MEMBER', permissions: ['inventory:'] })).body.role_id;
    await t.admin.createUser({ domainId: 'd1', userId: 'opener', password: 'password-1' });
    await t.admin.createUser({ domainId: 'd1', userId: 'inv', password: 'password-1' });
    await rb('create', admin, { user_id: 'opener', role_id: open, resource_group: 'WORKSPACE', workspace_id: 'ws-1' });
    await rb('create', admin, { user_id: 'inv', role_id: inv, resource_group: 'WORKSPACE', workspace_id: 'ws-1' });
    const o = await grant(await login('opener'), { scope: 'WORKSPACE', workspace_id: 'ws-1' });
    expect(decodeJwt(o.body.access_token)).toMatchObject({ role_id: open, role_type: 'WORKSPACE_MEMBER', permissions: ['*'] });
    expect((await request(t.app).post('/identity/v2/project/list').set('Authorization', `Bearer ${o.body.access_token}`).send({})).status).toBe(200);
    const i = await grant(await login('inv'), { scope: 'WORKSPACE', workspace_id: 'ws-1' });
    expect(decodeJwt(i.body.access_token).permissions).toEqual(['inventory:']);
    // identity:Project.read does not start with inventory: (the cost-analysis side is in cost-analysis's custom-role spec).
    expect((await request(t.app).post('/identity/v2/project/list').set('Authorization', `Bearer ${i.body.access_token}`).send({})).status).toBe(403);
  });

  it('disable ends every token granted with the role at once, here and in other modules; no grant until enabled', async () => {
    const id = (await role('create', admin, { name: 'To disable', role_type: 'WORKSPACE_MEMBER', permissions: ['identity:'] })).body.role_id;
    const tokens: string[] = [];
    const refreshes: string[] = [];
    for (const u of ['dis-1', 'dis-2']) {
      await t.admin.createUser({ domainId: 'd1', userId: u, password: 'password-1' });
      await rb('create', admin, { user_id: u, role_id: id, resource_group: 'WORKSPACE', workspace_id: 'ws-2' });
      const refresh = await login(u);
      refreshes.push(refresh);
      tokens.push((await grant(refresh, { scope: 'WORKSPACE', workspace_id: 'ws-2' })).body.access_token);
    }
    const bystander = (await grant(await login('member'), { scope: 'WORKSPACE', workspace_id: 'ws-1' })).body.access_token;
    for (const tok of tokens) expect(await works(tok)).toBe(true);
    const off = await role('disable', admin, { role_id: id });
    expect([off.status, off.body.state]).toEqual([200, 'DISABLED']);
    for (const tok of tokens) {
      expect(await works(tok)).toBe(false);
      expect(await worksElsewhere(tok)).toBe(false);
    }
    expect(await works(bystander)).toBe(true);
    const refused = await grant(refreshes[0], { scope: 'WORKSPACE', workspace_id: 'ws-2' });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'ERROR_PERMISSION_DENIED']);
    // The user's other scopes do not rest on the role.
    expect((await grant(refreshes[0], { scope: 'USER' })).status).toBe(200);
    const on = await role('enable', admin, { role_id: id });
    expect(on.body.state).toBe('ENABLED');
    const fresh = await grant(refreshes[0], { scope: 'WORKSPACE', workspace_id: 'ws-2' });
    expect(await works(fresh.body.access_token)).toBe(true);
    expect(await works(tokens[0])).toBe(false); // enabling does not bring old tokens back
  });

  it('delete: refused while a binding names the role (409 ERROR_ROLE_IN_USED_AT_ROLE_BINDING), then deleted', async () => {
    const id = (await role('create', admin, { name: 'Short-lived', role_type: 'WORKSPACE_MEMBER' })).body.role_id;
    await t.admin.createUser({ domainId: 'd1', userId: 'brief', password: 'password-1' });
    const b = await rb('create', admin, { user_id: 'brief', role_id: id, resource_group: 'WORKSPACE', workspace_id: 'ws-2' });
    const refused = await role('delete', admin, { role_id: id });
    expect([refused.status, refused.body.error.code]).toEqual([409, 'ERROR_ROLE_IN_USED_AT_ROLE_BINDING']);
    expect((await rb('delete', admin, { role_binding_id: b.body.role_binding_id })).status).toBe(200);
    expect((await role('delete', admin, { role_id: id })).status).toBe(200);
    expect((await role('get', admin, { role_id: id })).status).toBe(404);
    expect((await rb('create', admin, { user_id: 'brief', role_id: id, resource_group: 'WORKSPACE', workspace_id: 'ws-2' })).status).toBe(404);
    // Changes racing a delete answer 200 or 404, never a 5xx.
    for (let i = 0; i < 4; i++) {
      const racy = (await role('create', admin, { name: `Deleted under ${i}`, role_type: 'WORKSPACE_MEMBER' })).body.role_id;
      const answers = await Promise.all([
        role('delete', admin, { role_id: racy }),
        role('disable', admin, { role_id: racy }),
        role('enable', admin, { role_id: racy }),
        role('update', admin, { role_id: racy, permissions: ['identity:'] }),
      ]);
      expect(answers[0].status).toBe(200);
      for (const a of answers.slice(1)) expect([200, 404]).toContain(a.status);
    }
  });

  it('a binding racing a delete: either the binding fails or the delete does, never a binding to a deleted role', async () => {
    for (let i = 0; i < 6; i++) {
      const id = (await role('create', admin, { name: `Racy ${i}`, role_type: 'WORKSPACE_MEMBER' })).body.role_id;
      await t.admin.createUser({ domainId: 'd1', userId: `racer-${i}`, password: 'password-1' });
      const [made, gone] = await Promise.all([
        rb('create', admin, { user_id: `racer-${i}`, role_id: id, resource_group: 'WORKSPACE', workspace_id: 'ws-2' }),
        role('delete', admin, { role_id: id }),
      ]);
      expect([made.status, gone.status].sort()).toEqual(made.status === 200 ? [200, 409] : [200, 404]);
      const orphans = await t.prisma.roleBinding.count({ where: { role_id: id } });
      const exists = await t.prisma.role.count({ where: { role_id: id } });
      expect(orphans === 0 || exists === 1).toBe(true);
    }
  });
});
