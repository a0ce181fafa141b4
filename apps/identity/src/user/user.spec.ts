import { createPublicKey } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { TokenVerifier } from '@platform/auth';
import { createLogger } from '@platform/core';
import { AccessRevocations } from '@platform/directory';
import { bearer, testKeys } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';

describe('identity user', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let admin: string;
  let owner: string;
  let member: string;
  let otherAdmin: string;
  const logs: string[] = [];

  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _enc, cb) => (logs.push(String(chunk)), cb()) });
    t = await createTestIdentity({}, { logger: createLogger('identity', 'debug', sink) });
    await seedDomain(t.admin, 'd1', ['ws-1']);
    await seedDomain(t.admin, 'd2');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(() => t.close());

  const call = (verb: string, auth: string, body: object = {}) => request(t.app).post(`/identity/v2/user/${verb}`).set('Authorization', auth).send(body);
  const login = (userId: string, password = 'S3cret-passw0rd!') =>
    request(t.app).post('/identity/v2/token/issue').send({ domain_id: 'd1', credentials: { user_id: userId, password } });

  it('creates a LOCAL user with every field of UserInfo and never answers or logs the password', async () => {
    const res = await call('create', admin, {
      user_id: 'alice@example.com',
      password: 'S3cret-passw0rd!',
      name: 'Alice',
      email: 'alice@example.com',
      language: 'ko',
      timezone: 'Asia/Seoul',
      tags: { team: 'sre' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      user_id: 'alice@example.com',
      name: 'Alice',
      state: 'ENABLED',
      email: 'alice@example.com',
      email_verified: false,
      auth_type: 'LOCAL',
      role_type: 'USER',
      role_id: '',
      mfa: { state: 'DISABLED', mfa_type: '', options: {} },
      language: 'ko',
      timezone: 'Asia/Seoul',
      required_actions: [],
      refresh_timeout: 10800,
      tags: { team: 'sre' },
      domain_id: 'd1',
      created_at: expect.stringMatching(/Z$/),
      last_accessed_at: '',
    });
    expect(JSON.stringify(res.body)).not.toMatch(/S3cret|argon2|password/);
    expect((await login('alice@example.com')).status).toBe(200);
    const updated = await call('update', admin, { user_id: 'alice@example.com', password: 'An0ther-passw0rd!' });
    expect(updated.status).toBe(200);
    expect(JSON.stringify(updated.body)).not.toMatch(/An0ther|argon2/);
    expect(logs.join('')).not.toMatch(/S3cret-passw0rd|An0ther-passw0rd|\$argon2/);
    expect(logs.join('')).toContain('/identity/v2/user/create');
  });

  it('creates an EXTERNAL user without a password; a password for one is refused, and it cannot log in with LOCAL', async () => {
    const res = await call('create', admin, { user_id: 'bob@example.com', auth_type: 'EXTERNAL', name: 'Bob' });
    expect(res.body).toMatchObject({ user_id: 'bob@example.com', auth_type: 'EXTERNAL' });
    expect((await call('create', admin, { user_id: 'carl', auth_type: 'EXTERNAL', password: 'password-123' })).body.error.code).toBe('ERROR_INVALID_PARAMETER');
    expect((await login('bob@example.com', '')).status).toBe(400);
    expect((await login('bob@example.com', 'anything-at-all')).body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    const pw = await call('update', admin, { user_id: 'bob@example.com', password: 'password-123' });
    expect([pw.status, pw.body.error.code]).toEqual([400, 'ERROR_UNABLE_TO_RESET_PASSWORD_IN_EXTERNAL_AUTH']);
  });

  it('validates: the password policy, ids, time zones, duplicates, unsupported upstream options', async () => {
    const bad = async (body: object, code = 'ERROR_INVALID_PARAMETER') => {
      const res = await call('create', admin, body);
      expect([JSON.stringify(body), res.status, res.body.error?.code]).toEqual([JSON.stringify(body), 400, code]);
    };
    await bad({ user_id: 'u1' }, 'ERROR_REQUIRED_PARAMETER');
    await bad({ user_id: 'u1', password: 'short' });
    await bad({ user_id: 'has space', password: 'password-123' });
    await bad({ user_id: '__proto__', password: 'password-123' });
    await bad({ user_id: 'u1', password: 'password-123', timezone: 'Mars/Olympus' });
    await bad({ user_id: 'u1', password: 'password-123', email: 'x'.repeat(256) });
    await bad({ user_id: 'u1', password: 'password-123', reset_password: true });
    await bad({ user_id: 'u1', password: 'password-123', enforce_mfa_state: 'ENABLED' });
    await bad({ user_id: 'u1', password: 'password-123', role_type: 'DOMAIN_ADMIN' });
    const dup = await call('create', admin, { user_id: 'owner', password: 'password-123' });
    expect([dup.status, dup.body.error.code]).toEqual([409, 'ERROR_ALREADY_EXISTS']);
  });

  it('is DOMAIN_ADMIN only (403 for owner and member) and scoped to the caller\'s domain (404 elsewhere)', async () => {
    for (const auth of [owner, member]) {
      for (const [verb, body] of [
        ['create', { user_id: 'x1', password: 'password-123' }],
        ['update', { user_id: 'member', name: 'x' }],
        ['delete', { user_id: 'member' }],
        ['enable', { user_id: 'member' }],
        ['disable', { user_id: 'member' }],
        ['get', { user_id: 'member' }],
        ['list', {}],
        ['stat', { query: { distinct: 'user_id' } }],
      ] as const) {
        expect([verb, (await call(verb, auth, body)).status]).toEqual([verb, 403]);
      }
    }
    for (const verb of ['get', 'update', 'delete', 'enable', 'disable']) {
      expect([verb, (await call(verb, otherAdmin, { user_id: 'alice@example.com' })).status]).toEqual([verb, 404]);
    }
    expect((await call('list', otherAdmin, {})).body.results.every((u: { domain_id: string }) => u.domain_id === 'd2')).toBe(true);
  });

  it('gets, lists and stats; role_type says DOMAIN_ADMIN for admins; secret columns are no query keys', async () => {
    expect((await call('get', admin, { user_id: 'admin' })).body).toMatchObject({ role_type: 'DOMAIN_ADMIN', role_id: 'managed-domain-admin' });
    const list = await call('list', admin, { auth_type: 'LOCAL', query: { sort: [{ key: 'user_id' }], only: ['user_id', 'state'] } });
    expect(list.status).toBe(200);
    expect(list.body.results[0]).toEqual({ user_id: expect.any(String), state: 'ENABLED' });
    const stat = await call('stat', admin, { query: { aggregate: [{ group: { keys: [{ key: 'auth_type', name: 'auth_type' }], fields: [{ name: 'n', operator: 'count' }] } }] } });
    expect(stat.status).toBe(200);
    for (const key of ['password_hash', 'mfa_secret']) {
      const res = await call('list', admin, { query: { filter: [{ k: key, v: '$argon2', o: 'contain' }] } });
      expect([key, res.status]).toEqual([key, 400]);
      expect((await call('stat', admin, { query: { distinct: key } })).status).toBe(400);
    }
  });

  it('refuses to disable or delete the last enabled DOMAIN_ADMIN', async () => {
    await seedDomain(t.admin, 'd3');
    const d3 = await bearer({ domainId: 'd3', roleType: 'DOMAIN_ADMIN', userId: 'someone' });
    for (const verb of ['disable', 'delete']) {
      const res = await call(verb, d3, { user_id: 'admin' });
      expect([verb, res.status, res.body.error.code]).toEqual([verb, 400, 'ERROR_LAST_ADMIN_CANNOT_DISABLED_DELETED']);
    }
    // With a second enabled admin, one of them can go.
    await t.admin.createUser({ domainId: 'd3', userId: 'admin2', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
    expect((await call('disable', d3, { user_id: 'admin' })).body.state).toBe('DISABLED');
    expect((await call('delete', d3, { user_id: 'admin2' })).body.error.code).toBe('ERROR_LAST_ADMIN_CANNOT_DISABLED_DELETED');
  });

  it("disabling a user stops their access tokens at once in every module, and their refresh token; enabling lets them log in again", async () => {
    await t.admin.createUser({ domainId: 'd1', userId: 'dana', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-1' });
    const issued = (await login('dana', 'password-1')).body;
    const access = (
      await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: issued.refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-1' })
    ).body.access_token;
    // Another module's process: its own verifier and its own view of the revocations.
    const elsewhere = new AccessRevocations(t.deps.redis, { prefix: t.deps.redisPrefix });
    await elsewhere.start();
    const otherModule = new TokenVerifier(createPublicKey(testKeys.publicPem)).useRevocations(elsewhere);
    try {
      await otherModule.authenticate(access);
      const pg = () => request(t.app).post('/identity/v2/project-group/list').set('Authorization', `Bearer ${access}`).send({});
      expect((await pg()).status).toBe(200);
      expect((await call('disable', admin, { user_id: 'dana' })).body.state).toBe('DISABLED');
      expect((await pg()).status).toBe(401);
      await expect(otherModule.authenticate(access)).rejects.toMatchObject({ code: 'ERROR_AUTHENTICATE_FAILURE' });
      const refresh = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: issued.refresh_token, scope: 'USER' });
      expect(refresh.status).toBe(401);
      expect((await login('dana', 'password-1')).status).toBe(401);
      expect((await call('enable', admin, { user_id: 'dana' })).body.state).toBe('ENABLED');
      const again = (await login('dana', 'password-1')).body.refresh_token;
      const fresh = (await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: again, scope: 'WORKSPACE', workspace_id: 'ws-1' })).body.access_token;
      expect((await otherModule.authenticate(fresh)).userId).toBe('dana');
      // The old access token stays revoked, and so does the refresh token from before the disable.
      expect((await pg()).status).toBe(401);
      const old = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: issued.refresh_token, scope: 'USER' });
      expect([old.status, old.body.error.code]).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      const current = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: again, scope: 'USER' });
      expect(current.status).toBe(200);
    } finally {
      elsewhere.stop();
    }
  });

  it('a new password ends the sessions of the old one: access and refresh tokens', async () => {
    await t.admin.createUser({ domainId: 'd1', userId: 'frank', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-1' });
    const before = (await login('frank', 'password-1')).body;
    await new Promise((r) => setTimeout(r, 2));
    expect((await call('update', admin, { user_id: 'frank', password: 'password-2' })).status).toBe(200);
    const grant = (token: string) => request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token, scope: 'USER' });
    expect((await grant(before.refresh_token)).status).toBe(401);
    expect((await request(t.app).post('/identity/v2/workspace/list').set('Authorization', `Bearer ${before.access_token}`).send({})).status).toBe(401);
    expect((await login('frank', 'password-1')).status).toBe(401);
    const after = (await login('frank', 'password-2')).body;
    expect((await grant(after.refresh_token)).status).toBe(200);
    // A profile change ends nothing.
    expect((await call('update', admin, { user_id: 'frank', name: 'Frank' })).status).toBe(200);
    expect((await grant(after.refresh_token)).status).toBe(200);
  });

  it('deleting a user removes their bindings and memberships and stops their tokens; the id can be reused clean', async () => {
    await t.admin.createUser({ domainId: 'd1', userId: 'erin', password: 'password-1', roleType: 'WORKSPACE_MEMBER', workspaceId: 'ws-1' });
    await t.admin.createProject({ domainId: 'd1', workspaceId: 'ws-1', projectId: 'p-erin', name: 'erin' });
    await t.admin.addProjectUsers({ domainId: 'd1', projectId: 'p-erin', users: ['erin', 'member'] });
    const token = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'erin' });
    const erinRefresh = (await login('erin', 'password-1')).body.refresh_token;
    await new Promise((r) => setTimeout(r, 2));
    expect((await call('delete', admin, { user_id: 'erin' })).body).toEqual({});
    expect((await call('get', admin, { user_id: 'erin' })).status).toBe(404);
    expect(await t.prisma.roleBinding.count({ where: { domain_id: 'd1', user_id: 'erin' } })).toBe(0);
    expect((await t.prisma.project.findUnique({ where: { domain_id_project_id: { domain_id: 'd1', project_id: 'p-erin' } } }))?.users).toEqual(['member']);
    expect((await request(t.app).post('/identity/v2/project-group/list').set('Authorization', token).send({})).status).toBe(401);
    const erinBefore = (await t.prisma.user.count({ where: { domain_id: 'd1', user_id: 'erin' } })) === 0;
    expect(erinBefore).toBe(true);
    expect((await call('create', admin, { user_id: 'erin', password: 'password-123' })).status).toBe(200);
    // The old incarnation's tokens open nothing of the new user.
    expect((await request(t.app).post('/identity/v2/project-group/list').set('Authorization', token).send({})).status).toBe(401);
    expect((await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: erinRefresh, scope: 'USER' })).status).toBe(401);
  });
});
