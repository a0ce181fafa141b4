import request from 'supertest';
import { bearer } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';

/**
 * Issue #27 (LOW, user existence; docs/decisions/identity.md "What a WORKSPACE_OWNER learns about
 * users"): an owner learns whether a user id exists in their domain (role-binding/create binds any
 * user of the domain, as upstream) and who belongs to their workspace, nothing more. Every refusal
 * about a user id they name is one answer, whatever the reason.
 */
describe('identity: what a WORKSPACE_OWNER learns about user ids', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let owner: string;
  let projectId: string;
  let groupId: string;
  beforeAll(async () => {
    t = await createTestIdentity();
    await seedDomain(t.admin, 'd1', ['ws-1', 'ws-2']);
    await seedDomain(t.admin, 'd2');
    await t.admin.createUser({ domainId: 'd1', userId: 'in-ws-2', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-2' });
    await t.admin.createUser({ domainId: 'd1', userId: 'sleeper', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-2' });
    await t.prisma.user.update({ where: { domain_id_user_id: { domain_id: 'd1', user_id: 'sleeper' } }, data: { state: 'DISABLED' } });
    await t.admin.createUser({ domainId: 'd2', userId: 'only-in-d2', password: 'password-1' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    projectId = (await call('project/create', { name: 'p' })).body.project_id;
    groupId = (await call('project-group/create', { name: 'g' })).body.project_group_id;
  });
  afterAll(() => t.close());

  function call(path: string, body: object) {
    return request(t.app).post(`/identity/v2/${path}`).set('Authorization', owner).send(body);
  }
  const answer = (res: request.Response) => ({ status: res.status, body: res.body });
  const notFound = (id: string) => ({ status: 404, body: { error: { code: 'ERROR_NOT_FOUND', message: `Resource not found. (user_id = ${id})`, status: 404 } } });
  const bind = (user_id: string) => call('role-binding/create', { user_id, role_id: 'managed-workspace-member', resource_group: 'WORKSPACE' });

  it('role-binding/create: an unknown id, another domain\'s user and a case variant get one answer', async () => {
    for (const id of ['nobody', 'only-in-d2', 'IN-WS-2', 'Sleeper']) expect(answer(await bind(id))).toEqual(notFound(id));
  });

  it('project/add-users and project-group/add-users: unknown, another domain\'s, another workspace\'s and a disabled user get that same answer', async () => {
    for (const id of ['nobody', 'only-in-d2', 'in-ws-2', 'sleeper', 'IN-WS-2']) {
      expect(answer(await call('project/add-users', { project_id: projectId, users: [id] }))).toEqual(notFound(id));
      expect(answer(await call('project-group/add-users', { project_group_id: groupId, users: [id] }))).toEqual(notFound(id));
    }
  });

  it('a user of the domain can be bound (existence is inherent to upstream\'s rule), and then added: nothing of their state or roles is told', async () => {
    const bound = await bind('sleeper');
    expect(bound.status).toBe(200);
    expect(Object.keys(bound.body).sort()).toEqual(['created_at', 'domain_id', 'resource_group', 'role_binding_id', 'role_id', 'role_type', 'user_id', 'workspace_group_id', 'workspace_id']);
    expect((await call('project/add-users', { project_id: projectId, users: ['sleeper'] })).status).toBe(200);
    // user/get and user/list (state, auth type, email, roles) stay DOMAIN_ADMIN's.
    expect((await call('user/get', { user_id: 'sleeper' })).status).toBe(403);
  });
});
