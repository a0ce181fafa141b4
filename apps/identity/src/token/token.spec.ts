import request from 'supertest';
import { decodeJwt } from 'jose';
import { mintToken } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';
import { currentCounter, totpAt } from '../mfa/totp';

describe('identity token', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  beforeAll(async () => {
    t = await createTestIdentity();
    t.deps.config.login.maxFailures = 3;
    await seedDomain(t.admin, 'd1');
    await t.admin.createDomain({ domainId: 'd-off', name: 'off' });
    await t.prisma.domain.update({ where: { domain_id: 'd-off' }, data: { state: 'DISABLED' } });
    await t.admin.createUser({ domainId: 'd-off', userId: 'admin', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
    await t.admin.createUser({ domainId: 'd1', userId: 'disabled', password: 'password-1' });
    await t.prisma.user.update({ where: { domain_id_user_id: { domain_id: 'd1', user_id: 'disabled' } }, data: { state: 'DISABLED' } });
    await t.admin.createWorkspace({ domainId: 'd1', workspaceId: 'ws-off', name: 'off' });
    await t.prisma.workspace.update({ where: { domain_id_workspace_id: { domain_id: 'd1', workspace_id: 'ws-off' } }, data: { state: 'DISABLED' } });
  });
  afterAll(() => t.close());

  const issue = (body: object) => request(t.app).post('/identity/v2/token/issue').send(body);
  const grant = (body: object) => request(t.app).post('/identity/v2/token/grant').send(body);
  const login = async (user: string, domain = 'd1') => {
    const res = await issue({ credentials: { user_id: user, password: 'password-1' }, domain_id: domain });
    expect(res.status).toBe(200);
    return res.body as { access_token: string; refresh_token: string };
  };

  it('issues an access and a refresh token for LOCAL credentials', async () => {
    const tokens = await login('admin');
    expect(Object.keys(tokens).sort()).toEqual(['access_token', 'refresh_token']);
    const access = decodeJwt(tokens.access_token);
    const refresh = decodeJwt(tokens.refresh_token);
    expect(access).toMatchObject({ token_type: 'ACCESS_TOKEN', domain_id: 'd1', user_id: 'admin', scope: 'USER', role_type: 'USER' });
    expect(refresh).toMatchObject({ token_type: 'REFRESH_TOKEN' });
    expect(access.exp! - access.iat!).toBe(1800);
    expect(refresh.exp! - refresh.iat!).toBe(10800);
  });

  it('bounds the access token lifetime by timeout, capped at the maximum', async () => {
    const short = await issue({ credentials: { user_id: 'admin', password: 'password-1' }, domain_id: 'd1', timeout: 60 });
    const a = decodeJwt(short.body.access_token);
    expect(a.exp! - a.iat!).toBe(60);
    const long = await issue({ credentials: { user_id: 'admin', password: 'password-1' }, domain_id: 'd1', timeout: 10_000_000 });
    const b = decodeJwt(long.body.access_token);
    expect(b.exp! - b.iat!).toBe(604800);
    expect((await issue({ credentials: { user_id: 'admin', password: 'password-1' }, domain_id: 'd1', timeout: -5 })).status).toBe(400);
  });

  it('answers wrong password, unknown user, unknown or disabled domain and disabled user with the same error', async () => {
    const bodies = [
      { credentials: { user_id: 'owner', password: 'wrong-password' }, domain_id: 'd1' },
      { credentials: { user_id: 'nobody', password: 'password-1' }, domain_id: 'd1' },
      { credentials: { user_id: 'admin', password: 'password-1' }, domain_id: 'no-such-domain' },
      { credentials: { user_id: 'admin', password: 'password-1' }, domain_id: 'd-off' },
      { credentials: { user_id: 'disabled', password: 'password-1' }, domain_id: 'd1' },
    ];
    const answers = [];
    for (const b of bodies) {
      const res = await issue(b);
      answers.push([res.status, res.body]);
    }
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0][0]).toBe(401);
    expect((answers[0][1] as any).error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
  });

  it('validates the issue request', async () => {
    expect((await issue({ domain_id: 'd1' })).body.error).toMatchObject({ code: 'ERROR_REQUIRED_PARAMETER', status: 400 });
    expect((await issue({ credentials: { password: 'x' }, domain_id: 'd1' })).body.error.message).toContain('credentials.user_id');
    expect((await issue({ credentials: { user_id: 'admin' }, domain_id: 'd1' })).body.error.message).toContain('credentials.password');
    expect((await issue({ credentials: { user_id: 'admin', password: 'p' }, domain_id: 'd1', auth_type: 'SAML' })).status).toBe(400);
  });

  it('answers EXTERNAL when none is configured with the same 401 as every refusal: whether a domain has SSO is not told (#27)', async () => {
    const wrongPassword = await issue({ credentials: { user_id: 'admin', password: 'wrong-password' }, domain_id: 'd1' });
    for (const domain_id of ['d1', 'no-such-domain']) {
      const res = await issue({ credentials: { access_token: 'a-provider-token' }, domain_id, auth_type: 'EXTERNAL' });
      expect([res.status, res.body]).toEqual([401, wrongPassword.body]);
    }
    // A password login's credentials are no provider token: the same 401, configured or not.
    expect(await issue({ credentials: { user_id: 'admin' }, domain_id: 'd1', auth_type: 'EXTERNAL' })).toMatchObject({ status: 401, body: wrongPassword.body });
    // The request's shape is checked first (a 400 that does not depend on the domain).
    expect((await issue({ credentials: {}, domain_id: 'd1', auth_type: 'EXTERNAL' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
  });

  it('blocks the login for a while after repeated failures, even with the right password', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await issue({ credentials: { user_id: 'member2', password: 'nope-nope' }, domain_id: 'd1' })).status).toBe(401);
    }
    const blocked = await issue({ credentials: { user_id: 'member2', password: 'password-1' }, domain_id: 'd1' });
    expect(blocked.status).toBe(401);
    expect(blocked.body.error.code).toBe('ERROR_LOGIN_BLOCKED');
    const ttl = await t.deps.redis.ttl(`${t.deps.redisPrefix}identity:login-attempts:{d1}:member2`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(300);
    // Other users are not affected.
    await login('member');
  });

  it('requires a TOTP code for an MFA user, then issues on the second step', async () => {
    await t.admin.createUser({ domainId: 'd1', userId: 'mfa-user', password: 'password-1' });
    const { secret } = await t.admin.enableMfa({ domainId: 'd1', userId: 'mfa-user' });
    const first = await issue({ credentials: { user_id: 'mfa-user', password: 'password-1' }, domain_id: 'd1' });
    expect(first.status).toBe(401);
    expect(first.body.error.code).toBe('ERROR_MFA_REQUIRED');

    const wrong = await issue({ credentials: { user_id: 'mfa-user' }, domain_id: 'd1', auth_type: 'MFA', verify_code: '000000' === totpAt(secret, currentCounter()) ? '111111' : '000000' });
    expect(wrong.body.error.code).toBe('ERROR_INVALID_CREDENTIALS');

    const code = totpAt(secret, currentCounter());
    const second = await issue({ credentials: { user_id: 'mfa-user' }, domain_id: 'd1', auth_type: 'MFA', verify_code: code });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).toBeDefined();
    // The same code cannot be replayed, and MFA without a prior password check is refused.
    const replay = await issue({ credentials: { user_id: 'mfa-user', password: 'password-1' }, domain_id: 'd1', auth_type: 'MFA', verify_code: code });
    expect(replay.body.error.code).toBe('ERROR_INVALID_CREDENTIALS');
    const noPassword = await issue({ credentials: { user_id: 'mfa-user' }, domain_id: 'd1', auth_type: 'MFA', verify_code: totpAt(secret, currentCounter() + 1) });
    expect(noPassword.status).toBe(401);
    expect(noPassword.body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
  });

  it('grants DOMAIN, WORKSPACE and USER scoped tokens by upstream rules', async () => {
    const admin = await login('admin');
    const d = await grant({ grant_type: 'REFRESH_TOKEN', token: admin.refresh_token, scope: 'DOMAIN' });
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({ role_type: 'DOMAIN_ADMIN', role_id: 'managed-domain-admin', domain_id: 'd1', workspace_id: '' });
    expect(Object.keys(d.body).sort()).toEqual(['access_token', 'domain_id', 'role_id', 'role_type', 'workspace_id']);

    const w = await grant({ grant_type: 'REFRESH_TOKEN', token: admin.refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-1' });
    expect(w.body).toMatchObject({ role_type: 'WORKSPACE_OWNER', domain_id: 'd1', workspace_id: 'ws-1' });
    expect(decodeJwt(w.body.access_token)).toMatchObject({ scope: 'WORKSPACE', workspace_id: 'ws-1', role_type: 'WORKSPACE_OWNER' });

    const member = await login('member');
    const mw = await grant({ grant_type: 'REFRESH_TOKEN', token: member.refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-1' });
    expect(mw.body).toMatchObject({ role_type: 'WORKSPACE_MEMBER', role_id: 'managed-workspace-member' });
    const md = await grant({ grant_type: 'REFRESH_TOKEN', token: member.refresh_token, scope: 'DOMAIN' });
    expect(md.status).toBe(403);

    const u = await grant({ grant_type: 'REFRESH_TOKEN', token: member.refresh_token, scope: 'USER' });
    expect(u.body).toMatchObject({ role_type: 'USER', workspace_id: '' });
  });

  it('refuses workspace grants without a role there, for missing or disabled workspaces', async () => {
    const member = await login('member');
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: member.refresh_token, scope: 'WORKSPACE' })).body.error.code).toBe('ERROR_REQUIRED_PARAMETER');
    const other = await grant({ grant_type: 'REFRESH_TOKEN', token: member.refresh_token, scope: 'WORKSPACE', workspace_id: 'nope' });
    expect(other.status).toBe(404);
    const loner = await login('loner');
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: loner.refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-1' })).status).toBe(403);
    const admin = await login('admin');
    const off = await grant({ grant_type: 'REFRESH_TOKEN', token: admin.refresh_token, scope: 'WORKSPACE', workspace_id: 'ws-off' });
    expect(off.status).toBe(400);
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: admin.refresh_token, scope: 'SYSTEM' })).status).toBe(400);
  });

  it('narrows permissions when asked', async () => {
    const admin = await login('admin');
    const g = await grant({ grant_type: 'REFRESH_TOKEN', token: admin.refresh_token, scope: 'DOMAIN', permissions: ['identity:ProjectGroup.read'] });
    expect(decodeJwt(g.body.access_token).permissions).toEqual(['identity:ProjectGroup.read']);
  });

  it('refuses an access token as refresh token, expired, tampered and foreign tokens', async () => {
    const admin = await login('admin');
    const asAccess = await grant({ grant_type: 'REFRESH_TOKEN', token: admin.access_token, scope: 'DOMAIN' });
    expect(asAccess.body.error.code).toBe('ERROR_INVALID_GRANT_TYPE');
    const expired = await mintToken({ tokenType: 'REFRESH_TOKEN', domainId: 'd1', userId: 'admin', ttlSeconds: -1 });
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: expired, scope: 'DOMAIN' })).status).toBe(401);
    const [h, p, s] = admin.refresh_token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, user_id: 'owner' })).toString('base64url')}.${s}`;
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: forged, scope: 'DOMAIN' })).body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: 'garbage', scope: 'DOMAIN' })).status).toBe(401);
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: admin.refresh_token, scope: 'DOMAIN', domain_id: 'other' })).status).toBe(401);
    expect((await grant({ grant_type: 'SYSTEM_TOKEN', token: admin.refresh_token, scope: 'DOMAIN' })).body.error.code).toBe('ERROR_INVALID_GRANT_TYPE');
  });

  it('refuses a grant for a user disabled after login', async () => {
    await t.admin.createUser({ domainId: 'd1', userId: 'leaver', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
    const tokens = await login('leaver');
    await t.prisma.user.update({ where: { domain_id_user_id: { domain_id: 'd1', user_id: 'leaver' } }, data: { state: 'DISABLED' } });
    expect((await grant({ grant_type: 'REFRESH_TOKEN', token: tokens.refresh_token, scope: 'DOMAIN' })).status).toBe(401);
  });
});
