import request from 'supertest';
import { decodeJwt } from 'jose';
import { bearer, FakeProvider } from '@platform/testing';
import { createTestIdentity, seedDomain } from './test-support';
import { LOOPBACK_ONLY } from '@platform/net';

/**
 * Operations as a client generated from upstream's protos (cloudforet-io/api 2.0.435, identity/v2)
 * sends them: every field of the request message present, unset ones at their proto3 defaults.
 */
const QUERY = { filter: [], filter_or: [], sort: [], page: { start: 0, limit: 0 }, minimal: false, count_only: false, only: [], keyword: '', lookup: [], add_fields: {} };
const STAT = (over: object) => ({ filter: [], filter_or: [], aggregate: [], page: { start: 0, limit: 0 }, distinct: '', keyword: '', ...over });

describe('identity: requests of proto3 clients', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let owner: string;
  let root = '';
  let child = '';
  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1']);
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
  });
  afterAll(() => t.close());
  const call = (path: string, body: object) => request(t.app).post(`/identity/${path}`).set('Authorization', owner).send(body);
  const ok = async (path: string, body: object) => {
    const res = await call(path, body);
    if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  test('project-group/create with parent_group_id "" creates a top-level group', async () => {
    const g = await ok('v2/project-group/create', { name: 'root', tags: {}, parent_group_id: '' });
    expect(g).toMatchObject({ name: 'root', tags: {}, parent_group_id: '' });
    root = g.project_group_id;
    child = (await ok('v2/project-group/create', { name: 'child', tags: {}, parent_group_id: root })).project_group_id;
    const empty = await call('v2/project-group/create', { name: '', tags: {}, parent_group_id: '' });
    expect([empty.status, empty.body.error.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
  });

  test("protobuf's JSON names: parentGroupId, query.filterOr, query.countOnly; both spellings are a 400", async () => {
    const g = await ok('v2/project-group/create', { name: 'camel', tags: { keepMe: 'x' }, parentGroupId: '' });
    expect(g).toMatchObject({ name: 'camel', parent_group_id: '', tags: { keepMe: 'x' } });
    expect(Object.keys(g)).toContain('project_group_id');
    const listed = await ok('v2/project-group/list', { query: { filterOr: [{ k: 'name', v: 'camel', o: 'eq' }], countOnly: true }, projectGroupId: '' });
    expect(listed.total_count).toBe(1);
    const both = await call('v2/project-group/create', { name: 'x', parent_group_id: '', parentGroupId: '' });
    expect([both.status, both.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect(both.body.error.message).toContain('parentGroupId');
    await ok('v2/project-group/delete', { projectGroupId: g.project_group_id });
  });

  test('project-group/list with name "" (and every other field at its default) lists every group', async () => {
    const res = await ok('v2/project-group/list', { query: QUERY, project_group_id: '', name: '', workspace_id: '', parent_group_id: '' });
    expect(res.results.map((g: { name: string }) => g.name).sort()).toEqual(['child', 'root']);
    expect((await ok('v2/project-group/list', { query: QUERY, project_group_id: '', name: 'child', workspace_id: '', parent_group_id: '' })).total_count).toBe(1);
  });

  test('project-group/update, change-parent-group, add-users, remove-users, get, stat, delete', async () => {
    expect(await ok('v2/project-group/update', { project_group_id: root, name: '', tags: {} })).toMatchObject({ name: 'root' });
    expect(await ok('v2/project-group/update', { project_group_id: root, name: 'top', tags: { a: 'b' } })).toMatchObject({ name: 'top', tags: { a: 'b' } });
    const other = (await ok('v2/project-group/create', { name: 'other', tags: {}, parent_group_id: '' })).project_group_id;
    expect((await ok('v2/project-group/change-parent-group', { project_group_id: child, parent_group_id: other })).parent_group_id).toBe(other);
    expect((await ok('v2/project-group/add-users', { project_group_id: child, users: ['member', 'member2'] })).users).toEqual(['member', 'member2']);
    expect((await ok('v2/project-group/remove-users', { project_group_id: child, users: ['member'] })).users).toEqual(['member2']);
    expect((await ok('v2/project-group/get', { project_group_id: child })).name).toBe('child');
    expect((await ok('v2/project-group/stat', { query: STAT({ distinct: 'name' }) })).results.sort()).toEqual(['child', 'other', 'top']);
    await ok('v2/project-group/delete', { project_group_id: child });
    expect((await call('v2/project-group/get', { project_group_id: child })).status).toBe(404);
  });

  test('endpoint/list (EndpointSearchQuery) with its defaults lists every endpoint', async () => {
    const all = await ok('v1/endpoint/list', { query: QUERY, service: '', endpoint_type: 'NONE' });
    expect(all.total_count).toBeGreaterThan(0);
    expect(all.results.map((e: { service: string }) => e.service)).toContain('identity');
    const pub = await ok('v1/endpoint/list', { query: QUERY, service: '', endpoint_type: 'PUBLIC' });
    expect(pub.total_count).toBe((await ok('v1/endpoint/list', { endpoint_type: 'public' })).total_count);
    // a free string, as upstream's: a value it does not know is ignored
    expect(await ok('v1/endpoint/list', { endpoint_type: 'satellite' })).toEqual(pub);
    expect((await ok('v1/endpoint/list', { endpointType: 'internal' })).total_count).toBe(pub.total_count);
  });

  describe('token (identity/v2/token.proto)', () => {
    const issue = (body: object) => request(t.app).post('/identity/v2/token/issue').send(body);
    const grant = (body: object) => request(t.app).post('/identity/v2/token/grant').send(body);
    /** IssueTokenRequest with auth_type NONE, timeout 0 and verify_code "": LOCAL, the default lifetime, no MFA code. */
    const login = async (user: string) => {
      const res = await issue({ credentials: { user_id: user, password: 'password-1' }, auth_type: 'NONE', timeout: 0, verify_code: '', domain_id: 'd1' });
      if (res.status !== 200) throw new Error(`issue: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body as { access_token: string; refresh_token: string };
    };

    test('token/issue: the defaults of IssueTokenRequest are not set', async () => {
      const tokens = await login('owner');
      const access = decodeJwt(tokens.access_token);
      expect(access).toMatchObject({ token_type: 'ACCESS_TOKEN', domain_id: 'd1', user_id: 'owner', scope: 'USER' });
      expect(access.exp! - access.iat!).toBe(1800); // timeout 0 is the default lifetime, not an expired token
      const set = await issue({ credentials: { user_id: 'owner', password: 'password-1' }, auth_type: 'LOCAL', timeout: 60, verify_code: '', domain_id: 'd1' });
      const short = decodeJwt(set.body.access_token);
      expect(short.exp! - short.iat!).toBe(60);
      // the required domain_id stays required
      const noDomain = await issue({ credentials: { user_id: 'owner', password: 'password-1' }, auth_type: 'NONE', timeout: 0, verify_code: '', domain_id: '' });
      expect([noDomain.status, noDomain.body.error.code]).toEqual([400, expect.stringMatching(/^ERROR_(INVALID|REQUIRED)_PARAMETER$/)]);
    });

    test('token/grant: timeout 0, permissions [], domain_id "" and workspace_id "" are not set', async () => {
      const { refresh_token } = await login('owner');
      const UNSET = { timeout: 0, permissions: [], domain_id: '', workspace_id: '' };
      const w = await grant({ grant_type: 'REFRESH_TOKEN', token: refresh_token, scope: 'WORKSPACE', ...UNSET, workspace_id: 'ws-1' });
      expect([w.status, w.body]).toEqual([200, expect.objectContaining({ role_type: 'WORKSPACE_OWNER', domain_id: 'd1', workspace_id: 'ws-1' })]);
      const access = decodeJwt(w.body.access_token);
      expect(access).toMatchObject({ scope: 'WORKSPACE', workspace_id: 'ws-1', role_type: 'WORKSPACE_OWNER' });
      // as a grant that leaves them out: the role's permissions (not none), the default lifetime (not 0)
      const plain = decodeJwt((await grant({ grant_type: 'REFRESH_TOKEN', token: refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-1' })).body.access_token);
      expect(access.permissions).toEqual(plain.permissions);
      expect(access.permissions).toEqual(['*']);
      expect(access.exp! - access.iat!).toBe(plain.exp! - plain.iat!);
      expect(access.exp! - access.iat!).toBeGreaterThan(0);
      const u = await grant({ grant_type: 'REFRESH_TOKEN', token: refresh_token, scope: 'USER', ...UNSET });
      expect([u.status, u.body]).toEqual([200, expect.objectContaining({ role_type: 'USER', workspace_id: '' })]);
      // a WORKSPACE grant with workspace_id "" has no workspace: the same 400 as leaving it out
      const none = await grant({ grant_type: 'REFRESH_TOKEN', token: refresh_token, scope: 'WORKSPACE', ...UNSET });
      expect([none.status, none.body.error.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
      // the required enums stay required: their zero values are a 400
      for (const body of [
        { grant_type: 'GRANT_TYPE_NONE', token: refresh_token, scope: 'USER', ...UNSET },
        { grant_type: 'REFRESH_TOKEN', token: refresh_token, scope: 'SCOPE_NONE', ...UNSET },
      ]) {
        expect((await grant(body)).status).toBe(400);
      }
    });
  });

  describe('identity management (user, workspace, role, role_binding, project .proto of identity/v2)', () => {
    let admin: string;
    const as = (auth: string) => async (path: string, body: object) => {
      const res = await request(t.app).post(`/identity/${path}`).set('Authorization', auth).send(body);
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    beforeAll(async () => {
      admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    });

    test('workspace: create, update, get, list (WorkspaceSearchQuery at its defaults), stat, disable, enable, delete (force false)', async () => {
      const call = as(admin);
      const w = await call('v2/workspace/create', { name: 'proto-ws', tags: {} });
      expect(await call('v2/workspace/update', { workspace_id: w.workspace_id, name: '', tags: {} })).toMatchObject({ name: 'proto-ws' });
      const list = await call('v2/workspace/list', { query: QUERY, workspace_id: '', name: '', state: 'NONE', created_by: '', is_managed: false, is_dormant: false, workspace_group_id: '' });
      expect(list.results.map((x: { name: string }) => x.name)).toContain('proto-ws');
      expect((await call('v2/workspace/stat', { query: STAT({ distinct: 'name' }) })).results).toContain('proto-ws');
      expect((await call('v2/workspace/disable', { workspace_id: w.workspace_id })).state).toBe('DISABLED');
      expect((await call('v2/workspace/enable', { workspace_id: w.workspace_id })).state).toBe('ENABLED');
      expect(await call('v2/workspace/delete', { workspace_id: w.workspace_id, force: false })).toEqual({});
    });

    test('user: CreateUserRequest with auth_type NONE_BACKEND (LOCAL) and every other field at its default; update, list, stat', async () => {
      const call = as(admin);
      const defaults = { name: '', email: '', language: '', timezone: '', tags: {}, reset_password: false, enforce_mfa_state: '', enforce_mfa_type: '' };
      const u = await call('v2/user/create', { user_id: 'proto-user', password: 'password-123', auth_type: 'NONE_BACKEND', ...defaults });
      expect(u).toMatchObject({ auth_type: 'LOCAL', language: 'en', timezone: 'UTC' });
      const ext = await call('v2/user/create', { user_id: 'proto-ext', password: '', auth_type: 'EXTERNAL', ...defaults });
      expect(ext.auth_type).toBe('EXTERNAL');
      expect(await call('v2/user/update', { user_id: 'proto-user', password: '', ...defaults, name: 'Proto' })).toMatchObject({ name: 'Proto', language: 'en' });
      // free strings, as upstream's: email is not checked for form; enforce_mfa_state other than ENABLED enforces nothing
      expect(await call('v2/user/update', { userId: 'proto-user', email: 'ops desk, room 4', enforceMfaState: 'OFF' })).toMatchObject({ email: 'ops desk, room 4' });
      const mfa = await request(t.app).post('/identity/v2/user/update').set('Authorization', admin).send({ user_id: 'proto-user', enforce_mfa_state: 'ENABLED' });
      expect([mfa.status, mfa.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
      const list = await call('v2/user/list', { query: QUERY, user_id: '', name: '', state: 'NONE', email: '', auth_type: 'NONE_BACKEND' });
      expect(list.results.map((x: { user_id: string }) => x.user_id)).toEqual(expect.arrayContaining(['proto-user', 'proto-ext']));
      expect((await call('v2/user/stat', { query: STAT({ distinct: 'auth_type' }) })).results.sort()).toEqual(['EXTERNAL', 'LOCAL']);
      expect((await call('v2/user/disable', { user_id: 'proto-ext' })).state).toBe('DISABLED');
      expect(await call('v2/user/delete', { user_id: 'proto-ext' })).toEqual({});
    });

    test('role and role_binding: RoleSearchQuery and RoleBindingSearchQuery at their defaults', async () => {
      const call = as(admin);
      expect((await call('v2/role/list', { query: QUERY, role_id: '', name: '', role_type: 'NONE', state: 'NONE' })).total_count).toBe(3);
      const b = await call('v2/role-binding/create', { user_id: 'proto-user', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: 'ws-1' });
      expect(await call('v2/role-binding/update-role', { role_binding_id: b.role_binding_id, role_id: 'managed-workspace-owner' })).toMatchObject({ role_type: 'WORKSPACE_OWNER' });
      const list = await call('v2/role-binding/list', { query: QUERY, role_binding_id: '', role_type: 'ROLE_TYPE_NONE', workspace_id: '', role_id: '', user_id: 'proto-user' });
      expect(list.total_count).toBe(1);
      expect((await call('v2/role-binding/stat', { query: STAT({ distinct: 'user_id' }) })).results).toContain('proto-user');
      expect(await call('v2/role-binding/delete', { role_binding_id: b.role_binding_id })).toEqual({});
      // the required enum stays required
      const none = await request(t.app).post('/identity/v2/role-binding/create').set('Authorization', admin).send({ user_id: 'proto-user', role_id: 'managed-workspace-member', resource_group: 'NONE', workspace_id: 'ws-1' });
      expect([none.status, none.body.error.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
      const left = await request(t.app).post('/identity/v2/role-binding/create').set('Authorization', admin).send({ user_id: 'proto-user', role_id: 'managed-workspace-member', workspace_id: 'ws-1' });
      expect([left.status, left.body.error.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
    });

    test('external_auth: SetExternalAuthRequest with PluginRequest at its defaults (version "", upgrade_mode NONE, schema_id "", secret_data {})', async () => {
      const call = as(admin);
      const fake = await new FakeProvider().start();
      const allow = t.deps.config.externalAuth.outbound;
      t.deps.config.externalAuth.outbound = LOOPBACK_ONLY;
      try {
        const realm = await fake.realm('proto');
        const set = await call('v2/external-auth/set', {
          plugin_info: { plugin_id: 'plugin-oidc-identity-auth', version: '', upgrade_mode: 'NONE', options: { issuer: realm.issuer, client_id: 'platform' }, schema_id: '', secret_data: {} },
        });
        expect(set).toMatchObject({ state: 'ENABLED', plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options: { issuer: realm.issuer, client_id: 'platform', user_id_claim: 'email' } } });
        expect((await call('v2/external-auth/get', {})).state).toBe('ENABLED');
        expect((await call('v2/external-auth/unset', {})).domain_id).toBe('d1');
        expect((await call('v2/external-auth/get', {})).state).toBe('DISABLED');
      } finally {
        t.deps.config.externalAuth.outbound = allow;
        await fake.stop();
      }
    });

    test('project: CreateProjectRequest with project_type PROJECT_TYPE_NONE (PRIVATE), ProjectSearchQuery at its defaults', async () => {
      const call = as(owner);
      const p = await call('v2/project/create', { name: 'proto-project', project_type: 'PROJECT_TYPE_NONE', tags: {}, project_group_id: '' });
      expect(p).toMatchObject({ project_type: 'PRIVATE', project_group_id: '' });
      expect(await call('v2/project/update', { project_id: p.project_id, name: '', tags: {} })).toMatchObject({ name: 'proto-project' });
      const list = await call('v2/project/list', { query: QUERY, project_id: '', name: '', project_type: 'PROJECT_TYPE_NONE', created_by: '', include_children: false, workspace_id: '', project_group_id: '', user_id: '' });
      expect(list.results.map((x: { name: string }) => x.name)).toContain('proto-project');
      expect((await call('v2/project/add-users', { project_id: p.project_id, users: ['member'] })).users).toEqual(['member']);
      expect((await call('v2/project/remove-users', { project_id: p.project_id, users: ['member'] })).users).toEqual([]);
      expect((await call('v2/project/stat', { query: STAT({ distinct: 'name' }) })).results).toContain('proto-project');
      expect(await call('v2/project/delete', { project_id: p.project_id })).toEqual({});
    });
  });
});
