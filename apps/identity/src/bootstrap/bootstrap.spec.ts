import request from 'supertest';
import { createLogger } from '@platform/core';
import { createTestIdentity } from '../test-support';
import { bootstrap, bootstrapNeeded } from './bootstrap';

describe('identity bootstrap and admin records', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  beforeAll(async () => {
    t = await createTestIdentity();
  });
  afterAll(() => t.close());
  const logger = createLogger('test', 'silent');
  const config = { domainId: 'domain-local', workspaceId: 'workspace-local', userId: 'admin' };

  it('creates the domain, workspace and admin once, printing a generated password once', async () => {
    const printed: string[] = [];
    expect(await bootstrapNeeded(t.deps.pool, config)).toBe(true);
    await bootstrap(t.deps, config, logger, (s) => printed.push(s));
    expect(await bootstrapNeeded(t.deps.pool, config)).toBe(false);
    expect(printed).toHaveLength(1);
    const password = /password=(\S+)/.exec(printed[0])![1];
    const bindings = await t.prisma.roleBinding.findMany({ where: { domain_id: 'domain-local', user_id: 'admin' } });
    expect(bindings.map((b) => b.role_type)).toEqual(['DOMAIN_ADMIN']);

    // A restart changes nothing: no new password, the old one still works.
    await bootstrap(t.deps, { ...config, password: 'another-password' }, logger, (s) => printed.push(s));
    expect(printed).toHaveLength(1);
    const res = await request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: 'admin', password }, domain_id: 'domain-local' });
    expect(res.status).toBe(200);
    expect(await t.prisma.workspace.count({ where: { domain_id: 'domain-local' } })).toBe(1);
  });

  it('is safe when several replicas start together on a fresh database: one creates, the others find it', async () => {
    const printed: string[] = [];
    const cfg = { domainId: 'd-race', workspaceId: 'w-race', userId: 'root-race', password: 'race-password-1' };
    await Promise.all([1, 2, 3, 4].map(() => bootstrap(t.deps, cfg, logger, (s) => printed.push(s))));
    expect(await t.prisma.user.count({ where: { domain_id: 'd-race' } })).toBe(1);
    expect(await t.prisma.roleBinding.count({ where: { domain_id: 'd-race' } })).toBe(1);
    expect(await bootstrapNeeded(t.deps.pool, cfg)).toBe(false);
  });

  it('uses BOOTSTRAP_PASSWORD when given, and prints nothing', async () => {
    const printed: string[] = [];
    // Any one record missing is something to create.
    expect(await bootstrapNeeded(t.deps.pool, { domainId: 'domain-local', workspaceId: 'workspace-local', userId: 'root' })).toBe(true);
    expect(await bootstrapNeeded(t.deps.pool, { domainId: 'domain-local', workspaceId: 'w', userId: 'admin' })).toBe(true);
    await bootstrap(t.deps, { domainId: 'd-boot', workspaceId: 'w', userId: 'root', password: 'chosen-password' }, logger, (s) => printed.push(s));
    expect(printed).toEqual([]);
    const res = await request(t.app).post('/identity/v2/token/issue').send({ credentials: { user_id: 'root', password: 'chosen-password' }, domain_id: 'd-boot' });
    expect(res.status).toBe(200);
  });

  it('admin records refuse duplicates, unknown parents and weak passwords', async () => {
    await t.admin.createDomain({ domainId: 'd-adm', name: 'x' });
    await expect(t.admin.createDomain({ domainId: 'd-adm', name: 'x' })).rejects.toMatchObject({ code: 'ERROR_ALREADY_EXISTS' });
    await expect(t.admin.createDomain({ domainId: 'bad id!', name: 'x' })).rejects.toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    await expect(t.admin.createWorkspace({ domainId: 'nope', workspaceId: 'w', name: 'w' })).rejects.toMatchObject({ code: 'ERROR_NOT_FOUND' });
    await t.admin.createWorkspace({ domainId: 'd-adm', workspaceId: 'w', name: 'w' });
    await expect(t.admin.createUser({ domainId: 'd-adm', userId: 'u', password: 'short' })).rejects.toMatchObject({ code: 'ERROR_INVALID_PARAMETER' });
    await expect(
      t.admin.createUser({ domainId: 'd-adm', userId: 'u', password: 'long-enough', roleType: 'WORKSPACE_MEMBER' }),
    ).rejects.toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER' });
    const u = await t.admin.createUser({ domainId: 'd-adm', userId: 'u', password: 'long-enough', roleType: 'WORKSPACE_MEMBER', workspaceId: 'w' });
    expect(u).toMatchObject({ user_id: 'u', role_type: 'WORKSPACE_MEMBER', workspace_id: 'w' });
    const stored = await t.prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: 'd-adm', user_id: 'u' } } });
    expect(stored!.password_hash).toMatch(/^\$argon2id\$/);
    await expect(t.admin.createProject({ domainId: 'd-adm', workspaceId: 'w', projectId: 'p', name: 'p', projectGroupId: 'pg-nope' })).rejects.toMatchObject({
      code: 'ERROR_NOT_FOUND',
    });
    const mfa = await t.admin.enableMfa({ domainId: 'd-adm', userId: 'u' });
    expect(mfa.otpauth_url).toMatch(/^otpauth:\/\/totp\//);
    expect(mfa.secret).toMatch(/^[A-Z2-7]{32}$/);
  });

  it('serves health, readiness, metrics and OpenAPI', async () => {
    expect((await request(t.app).get('/healthz')).status).toBe(200);
    const ready = await request(t.app).get('/readyz');
    expect(ready.body).toEqual({ status: 'ok', service: 'identity', checks: { postgres: 'ok', redis: 'ok' } });
    const doc = await request(t.app).get('/identity/openapi.json');
    const paths = Object.keys(doc.body.paths);
    for (const p of [
      '/identity/v2/token/issue',
      '/identity/v2/token/grant',
      '/identity/v1/endpoint/list',
      ...['create', 'update', 'change-parent-group', 'delete', 'add-users', 'remove-users', 'get', 'list', 'stat'].map((v) => `/identity/v2/project-group/${v}`),
    ]) {
      expect(paths).toContain(p);
    }
  });
});
