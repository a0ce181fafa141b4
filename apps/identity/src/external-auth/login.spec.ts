import { Writable } from 'node:stream';
import request from 'supertest';
import { decodeJwt, SignJWT, UnsecuredJWT } from 'jose';
import { createLogger } from '@platform/core';
import { bearer, FakeProvider, startOidcProvider, strangerKey, type FakeRealm, type ProviderTokens, type RealProvider } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';
import { LOOPBACK_ONLY } from '@platform/net';

const CLIENT_SECRET = 'client-secret-5e81c0aa';
const EXTERNAL = { outbound: LOOPBACK_ONLY, timeoutMs: 1000, cacheSeconds: 600, jwksCooldownSeconds: 1, clockSkewSeconds: 30 };
const FAILURE = { error: { code: 'ERROR_AUTHENTICATE_FAILURE', message: 'Authenticate failure. (credentials are invalid)', status: 401 } };

describe('identity token/issue with auth_type EXTERNAL', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let provider: RealProvider;
  let fake: FakeProvider;
  let acme: FakeRealm;
  const log: string[] = [];
  /** Every token a test handed to identity: none may ever appear in a log line. */
  const seen = new Set<string>();
  let alice: ProviderTokens & { jwt_access_token: string };

  const admin = (domainId: string) => bearer({ domainId, roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  const setAuth = async (domainId: string, options: object) => {
    const res = await request(t.app)
      .post('/identity/v2/external-auth/set')
      .set('Authorization', await admin(domainId))
      .send({ plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options, secret_data: { client_secret: CLIENT_SECRET } } });
    if (res.status !== 200) throw new Error(`set ${domainId}: ${res.status} ${res.text}`);
  };
  const externalUser = (domainId: string, userId: string, state = 'ENABLED') =>
    t.prisma.user.create({ data: { domain_id: domainId, user_id: userId, auth_type: 'EXTERNAL', state } });
  const issue = (domainId: string, credentials: Record<string, unknown>, o: { auth_type?: string } = {}) => {
    for (const k of ['access_token', 'id_token', 'password']) if (typeof credentials[k] === 'string') seen.add(credentials[k] as string);
    return request(t.app).post('/identity/v2/token/issue').send({ domain_id: domainId, auth_type: o.auth_type ?? 'EXTERNAL', credentials });
  };
  const expectFailure = (res: request.Response) => expect([res.status, res.body]).toEqual([401, FAILURE]);
  const expectTokens = (res: request.Response, userId: string, domainId = 'd1') => {
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'refresh_token']);
    expect(decodeJwt(res.body.access_token)).toMatchObject({ user_id: userId, domain_id: domainId, scope: 'USER', token_type: 'ACCESS_TOKEN' });
    expect(decodeJwt(res.body.refresh_token)).toMatchObject({ user_id: userId, token_type: 'REFRESH_TOKEN' });
  };

  beforeAll(async () => {
    const generous = { points: 10_000, seconds: 60 };
    [t, provider, fake] = await Promise.all([
      createTestIdentity({ externalAuth: { ...EXTERNAL }, issueRateLimit: { perAddress: generous, perUser: generous } }),
      startOidcProvider('platform', CLIENT_SECRET),
      new FakeProvider().start(),
    ]);
    const sink = new Writable({ write: (c, _e, cb) => (log.push(String(c)), cb()) });
    t.deps.logger = createLogger('identity', 'info', sink);
    acme = await fake.realm('acme');
    for (const d of ['d1', 'd2', 'd3', 'd4']) await seedDomain(t.admin, d);
    // d1: the real provider, users named by email; d2: the real provider, but another client;
    // d3: the fake realm (tokens the test makes), users named by sub; d4: issuer that will go down.
    await setAuth('d1', { issuer: provider.issuer, client_id: 'platform' });
    await setAuth('d2', { issuer: provider.issuer, client_id: 'someone-else' });
    await setAuth('d3', { issuer: acme.issuer, client_id: 'platform', user_id_claim: 'sub' });
    await externalUser('d1', 'alice@example.com');
    await externalUser('d1', 'bob@example.com');
    await externalUser('d1', 'carol@example.com', 'DISABLED');
    await externalUser('d2', 'alice@example.com');
    await externalUser('d3', 'dora');
    await externalUser('d3', 'lockme');
    await t.admin.createUser({ domainId: 'd1', userId: 'local@example.com', password: 'password-1' });
    await t.admin.createUser({ domainId: 'd3', userId: 'local', password: 'password-1' });
    const jwt = await provider.login('alice@example.com', { jwt: true });
    alice = { ...(await provider.login('alice@example.com')), jwt_access_token: jwt.access_token };
  });
  beforeEach(() => {
    t.deps.config.login.maxFailures = 10;
  });
  afterAll(async () => {
    await Promise.all([t.close(), provider.stop(), fake.stop()]);
  });

  describe('with the real provider (a full authorization-code login)', () => {
    it('logs in with a JWT access token (aud = client_id), checked against the issuer\'s JWKS', async () => {
      expect(decodeJwt(alice.jwt_access_token)).toMatchObject({ aud: 'platform', iss: provider.issuer, email: 'alice@example.com' });
      const res = await issue('d1', { access_token: alice.jwt_access_token });
      expectTokens(res, 'alice@example.com');
      const user = await t.prisma.user.findUniqueOrThrow({ where: { domain_id_user_id: { domain_id: 'd1', user_id: 'alice@example.com' } } });
      expect(Date.now() - user.last_accessed_at!.getTime()).toBeLessThan(10_000);
      // The refresh token is the platform's own: it grants like a LOCAL login's.
      const grant = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: res.body.refresh_token, scope: 'USER' });
      expect([grant.status, grant.body.role_type]).toEqual([200, 'USER']);
    });

    it('logs in with an id_token', async () => {
      expectTokens(await issue('d1', { id_token: alice.id_token }), 'alice@example.com');
    });

    it('logs in with an opaque access token, through the provider\'s userinfo', async () => {
      const bob = await provider.login('bob@example.com');
      expect(bob.access_token.split('.')).toHaveLength(1);
      expectTokens(await issue('d1', { access_token: bob.access_token }), 'bob@example.com');
    });

    it('refuses a token for another client (wrong audience)', async () => {
      expectFailure(await issue('d2', { access_token: alice.jwt_access_token }));
      expectFailure(await issue('d2', { id_token: alice.id_token }));
    });

    it('refuses a token of another issuer', async () => {
      // The real provider's token at a domain whose issuer is the fake realm (and the other way round).
      expectFailure(await issue('d3', { id_token: alice.id_token }));
      expectFailure(await issue('d1', { id_token: await acme.sign({ sub: 'alice@example.com', email: 'alice@example.com', aud: 'platform' }) }));
    });

    it('refuses a tampered token (claims changed, signature kept)', async () => {
      const [h, p, s] = alice.id_token.split('.');
      const claims = { ...JSON.parse(Buffer.from(p, 'base64url').toString()), email: 'bob@example.com' };
      expectFailure(await issue('d1', { id_token: `${h}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${s}` }));
      const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
      expectFailure(await issue('d1', { id_token: `${h}.${p}.${flipped}` }));
    });

    it('refuses an unknown user, a LOCAL user and a disabled user, all with the same answer', async () => {
      expectFailure(await issue('d1', { access_token: (await provider.login('nobody@example.com', { jwt: true })).access_token }));
      expectFailure(await issue('d1', { access_token: (await provider.login('local@example.com', { jwt: true })).access_token }));
      expectFailure(await issue('d1', { access_token: (await provider.login('carol@example.com', { jwt: true })).access_token }));
    });

    it('refuses an email the provider has not verified: email_verified false or absent, in every kind of token (#27)', async () => {
      await externalUser('d1', 'unverified@example.com');
      await externalUser('d1', 'noverified@example.com');
      for (const user of ['unverified@example.com', 'noverified@example.com']) {
        const jwt = await provider.login(user, { jwt: true });
        const opaque = await provider.login(user);
        expect(decodeJwt(jwt.access_token).email).toBe(user);
        expectFailure(await issue('d1', { access_token: jwt.access_token }));
        expectFailure(await issue('d1', { id_token: opaque.id_token }));
        expectFailure(await issue('d1', { access_token: opaque.access_token })); // through userinfo
      }
      // The same users log in once the provider vouches for the address (the string form too).
      await t.prisma.externalAuth.update({ where: { domain_id: 'd3' }, data: { options: { issuer: acme.issuer, client_id: 'platform', user_id_claim: 'email' } } });
      try {
        await externalUser('d3', 'vera@example.com');
        expectFailure(await issue('d3', { id_token: await acme.sign({ sub: 'v', aud: 'platform', email: 'vera@example.com', email_verified: false }) }));
        expectFailure(await issue('d3', { id_token: await acme.sign({ sub: 'v', aud: 'platform', email: 'vera@example.com', email_verified: 'false' }) }));
        expectFailure(await issue('d3', { id_token: await acme.sign({ sub: 'v', aud: 'platform', email: 'vera@example.com', email_verified: 1 }) }));
        expectTokens(await issue('d3', { id_token: await acme.sign({ sub: 'v', aud: 'platform', email: 'vera@example.com', email_verified: true }) }), 'vera@example.com', 'd3');
        expectTokens(await issue('d3', { id_token: await acme.sign({ sub: 'v', aud: 'platform', email: 'vera@example.com', email_verified: 'true' }) }), 'vera@example.com', 'd3');
      } finally {
        await t.prisma.externalAuth.update({ where: { domain_id: 'd3' }, data: { options: { issuer: acme.issuer, client_id: 'platform', user_id_claim: 'sub' } } });
      }
    });

    it('refuses an opaque token userinfo does not know (401 there)', async () => {
      expectFailure(await issue('d1', { access_token: 'not-a-token-the-provider-gave' }));
    });

    it('does not let an EXTERNAL user log in with a password', async () => {
      for (const password of ['', 'password-1', 'anything']) {
        const res = await issue('d1', { user_id: 'alice@example.com', password }, { auth_type: 'LOCAL' });
        expect(res.status).toBe(password ? 401 : 400);
        if (password) expectFailure(res);
      }
    });

    it('refuses a domain without external auth and a disabled domain with the same 401 (#27)', async () => {
      expectFailure(await issue('d4', { access_token: alice.jwt_access_token }));
      await t.prisma.domain.update({ where: { domain_id: 'd2' }, data: { state: 'DISABLED' } });
      try {
        const jwt = await provider.login('alice@example.com');
        await t.prisma.externalAuth.update({ where: { domain_id: 'd2' }, data: { options: { issuer: provider.issuer, client_id: 'platform', user_id_claim: 'email' } } });
        expectFailure(await issue('d2', { id_token: jwt.id_token }));
      } finally {
        await t.prisma.domain.update({ where: { domain_id: 'd2' }, data: { state: 'ENABLED' } });
      }
      // ...and the same token logs in once the domain is enabled again (the refusal was the state's).
      expectTokens(await issue('d2', { id_token: alice.id_token }), 'alice@example.com', 'd2');
    });
  });

  describe('with tokens the test makes (the fake realm)', () => {
    const now = () => Math.floor(Date.now() / 1000);

    it('accepts a good token, aud as an array (with azp the client), exp within the clock skew and up to 24 h ahead', async () => {
      expectTokens(await issue('d3', { id_token: await acme.sign({ sub: 'dora', aud: 'platform' }) }), 'dora', 'd3');
      expectTokens(await issue('d3', { access_token: await acme.sign({ sub: 'dora', aud: ['api', 'platform'] }) }), 'dora', 'd3');
      expectTokens(await issue('d3', { access_token: await acme.sign({ sub: 'dora', aud: ['api', 'platform'], azp: 'platform' }) }), 'dora', 'd3');
      expectTokens(await issue('d3', { access_token: await acme.sign({ sub: 'dora', aud: 'platform', exp: now() - 10 }) }), 'dora', 'd3');
      expectTokens(await issue('d3', { access_token: await acme.sign({ sub: 'dora', aud: 'platform', exp: now() + 86_000 }) }), 'dora', 'd3');
    });

    it('refuses a token whose aud is another client even when azp is ours, and a lifetime past 24 h (#27)', async () => {
      const bad = [
        { sub: 'dora', aud: 'api', azp: 'platform' },
        { sub: 'dora', aud: ['api', 'other'], azp: 'platform' },
        { sub: 'dora', aud: ['api', 'platform'], azp: 'other' },
        { sub: 'dora', aud: 'platform', exp: 253402300799 }, // year 9999
        { sub: 'dora', aud: 'platform', exp: now() + 86_400 + 120 },
        { sub: 'dora', aud: 'platform', iat: now() - 86_400, exp: now() + 60 }, // issued to live 24 h + 1 min
      ];
      for (const claims of bad) expectFailure(await issue('d3', { access_token: await acme.sign(claims) }));
    });

    it('a claim names the user whose id it equals but for case (ids are unique ignoring case, #27)', async () => {
      const res = await issue('d3', { id_token: await acme.sign({ sub: 'DoRa', aud: 'platform' }) });
      expectTokens(res, 'dora', 'd3');
    });

    it('with users named by sub, email_verified does not matter', async () => {
      expectTokens(await issue('d3', { id_token: await acme.sign({ sub: 'dora', aud: 'platform', email: 'x@example.com', email_verified: false }) }), 'dora', 'd3');
    });

    it('refuses expired, not yet valid, exp-less, wrongly addressed and wrongly issued tokens', async () => {
      const bad = [
        { sub: 'dora', aud: 'platform', exp: now() - 120 },
        { sub: 'dora', aud: 'platform', nbf: now() + 120 },
        { sub: 'dora', aud: 'platform', exp: undefined },
        { sub: 'dora', aud: 'api' },
        { sub: 'dora' , aud: 'api', azp: 'other' },
        { sub: 'dora', aud: 'platform', iss: `${acme.issuer}/other` },
        { sub: 'dora', aud: 'platform', iss: provider.issuer },
        { aud: 'platform', email: 'dora' },
        { sub: '', aud: 'platform' },
      ];
      for (const claims of bad) expectFailure(await issue('d3', { access_token: await acme.sign(claims) }));
    });

    it('refuses alg none, an HMAC token and a token signed by a key the issuer does not publish', async () => {
      const claims = { sub: 'dora', aud: 'platform', iss: acme.issuer, exp: now() + 600 };
      expectFailure(await issue('d3', { access_token: new UnsecuredJWT(claims).encode() }));
      const hs = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256', kid: acme.keys[0].kid }).sign(new TextEncoder().encode(JSON.stringify(acme.keys[0].publicJwk)));
      expectFailure(await issue('d3', { access_token: hs }));
      const stranger = await strangerKey();
      expectFailure(await issue('d3', { access_token: await acme.sign({ sub: 'dora', aud: 'platform' }, { key: stranger, kid: acme.keys[0].kid }) }));
    });

    it('follows a key rotation with one JWKS refetch, and never refetches faster than the cooldown', async () => {
      await acme.rotate();
      await new Promise((r) => setTimeout(r, 1100)); // past the test's 1 s cooldown since the last fetch
      const before = acme.jwksFetches;
      expectTokens(await issue('d3', { id_token: await acme.sign({ sub: 'dora', aud: 'platform' }) }), 'dora', 'd3');
      expect(acme.jwksFetches).toBe(before + 1);
      // Tokens with made-up key ids right after: refused, and no fetch at all.
      for (let i = 0; i < 5; i++) expectFailure(await issue('d3', { id_token: await acme.sign({ sub: 'dora', aud: 'platform' }, { kid: `made-up-${i}` }) }));
      expect(acme.jwksFetches).toBe(before + 1);
      // The discovery document stays cached too.
      expect(acme.discoveryFetches).toBeLessThanOrEqual(2);
    });

    it('fetches discovery and JWKS once for a burst of concurrent logins', async () => {
      const burst = await fake.realm('burst');
      await t.admin.createDomain({ domainId: 'd6', name: 'd6' });
      await t.admin.createUser({ domainId: 'd6', userId: 'admin', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
      await externalUser('d6', 'fay');
      await setAuth('d6', { issuer: burst.issuer, client_id: 'platform', user_id_claim: 'sub' });
      const token = await burst.sign({ sub: 'fay', aud: 'platform' });
      const answers = await Promise.all(Array.from({ length: 8 }, () => issue('d6', { id_token: token })));
      for (const res of answers) expectTokens(res, 'fay', 'd6');
      expect([burst.discoveryFetches, burst.jwksFetches]).toEqual([2, 1]); // set's own discovery, then one of each
    });

    it('logs in with an opaque token userinfo vouches for, naming the user by the claim', async () => {
      acme.opaque.set('opaque-dora-1', { sub: 'dora' });
      acme.opaque.set('opaque-nosub-1', { email: 'dora' });
      expectTokens(await issue('d3', { access_token: 'opaque-dora-1' }), 'dora', 'd3');
      expectFailure(await issue('d3', { access_token: 'opaque-nosub-1' }));
    });

    it('validates credentials: one of access_token or id_token, a bounded string', async () => {
      const code = async (c: Record<string, unknown>) => {
        const res = await issue('d3', c);
        return `${res.status} ${res.body.error?.code}`;
      };
      expect(await code({})).toBe('400 ERROR_REQUIRED_PARAMETER');
      expect(await code({ user_id: 'dora', password: 'x' })).toBe('401 ERROR_AUTHENTICATE_FAILURE'); // as where SSO is not configured
      expect(await code({ access_token: 'a', id_token: 'b' })).toBe('400 ERROR_INVALID_PARAMETER');
      expect(await code({ access_token: 42 })).toBe('400 ERROR_INVALID_PARAMETER_TYPE');
      expect(await code({ access_token: 'x'.repeat(20_000) })).toBe('400 ERROR_INVALID_PARAMETER');
      // A body key __proto__ is refused before anything reads it.
      expect(await code({ ['__proto__']: 'x' })).toBe('400 ERROR_INVALID_PARAMETER');
    });
  });

  describe('lockout and failures of the provider', () => {
    it('counts EXTERNAL failures per (domain, user) like password failures, and blocks both', async () => {
      t.deps.config.login.maxFailures = 3;
      await t.prisma.user.update({ where: { domain_id_user_id: { domain_id: 'd3', user_id: 'lockme' } }, data: { state: 'DISABLED' } });
      const token = () => acme.sign({ sub: 'lockme', aud: 'platform' });
      for (let i = 0; i < 3; i++) expectFailure(await issue('d3', { id_token: await token() }));
      const blocked = await issue('d3', { id_token: await token() });
      expect([blocked.status, blocked.body.error.code]).toEqual([401, 'ERROR_LOGIN_BLOCKED']);
      // Enabled again, still blocked until the window passes: the count is the user's.
      await t.prisma.user.update({ where: { domain_id_user_id: { domain_id: 'd3', user_id: 'lockme' } }, data: { state: 'ENABLED' } });
      expect((await issue('d3', { id_token: await token() })).body.error.code).toBe('ERROR_LOGIN_BLOCKED');
      // A LOCAL user's EXTERNAL failures count against its password logins too.
      for (let i = 0; i < 3; i++) expectFailure(await issue('d3', { id_token: await acme.sign({ sub: 'local', aud: 'platform' }) }));
      const password = await issue('d3', { user_id: 'local', password: 'password-1' }, { auth_type: 'LOCAL' });
      expect([password.status, password.body.error.code]).toEqual([401, 'ERROR_LOGIN_BLOCKED']);
    });

    it('answers 503, quickly, when the issuer is down, hangs or fails', async () => {
      const doomed = await new FakeProvider().start();
      const realm = await doomed.realm('down');
      await t.admin.createDomain({ domainId: 'd5', name: 'd5' });
      await t.admin.createUser({ domainId: 'd5', userId: 'admin', password: 'password-1', roleType: 'DOMAIN_ADMIN' });
      await externalUser('d5', 'erin');
      await setAuth('d5', { issuer: realm.issuer, client_id: 'platform', user_id_claim: 'sub' });
      const token = await realm.sign({ sub: 'erin', aud: 'platform' });
      await doomed.stop();
      for (const credentials of [{ id_token: token }, { access_token: 'opaque-erin' }]) {
        const started = Date.now();
        const res = await issue('d5', credentials);
        expect([res.status, res.body.error.code]).toEqual([503, 'ERROR_SERVICE_UNAVAILABLE']);
        expect(Date.now() - started).toBeLessThan(3000);
      }
      // Discovery hangs (a fresh issuer: nothing cached yet) → 503 within the timeout.
      const slow = await fake.realm('slow');
      await setAuth('d4', { issuer: slow.issuer, client_id: 'platform', user_id_claim: 'sub' });
      slow.mode = 'hang';
      const started = Date.now();
      const hung = await issue('d4', { id_token: await slow.sign({ sub: 'x', aud: 'platform' }) });
      expect([hung.status, hung.body.error.code]).toEqual([503, 'ERROR_SERVICE_UNAVAILABLE']);
      expect(Date.now() - started).toBeLessThan(3000);
      // Userinfo answers 5xx (discovery fine) → 503; a 401 there → 401.
      slow.mode = 'error';
      slow.failing = 'userinfo';
      expect((await issue('d4', { access_token: 'opaque-x' })).status).toBe(503);
      slow.mode = 'ok';
      expectFailure(await issue('d4', { access_token: 'opaque-x' }));
      // A userinfo endpoint that redirects is not followed: the token never goes elsewhere.
      slow.mode = 'redirect';
      expect((await issue('d4', { access_token: 'opaque-redirected' })).status).toBe(503);
      expect(slow.stolen).toEqual([]);
    });

    it('logs every refusal with its reason, never a token or the client secret', async () => {
      const lines = log.join('').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; reason?: string });
      const reasons = lines.filter((l) => l.msg === 'external login refused').map((l) => l.reason ?? '');
      expect(reasons.some((r) => /aud/.test(r))).toBe(true);
      expect(reasons.some((r) => /exp/.test(r))).toBe(true);
      expect(reasons.some((r) => /signature/i.test(r))).toBe(true);
      expect(reasons.some((r) => /no such user/.test(r))).toBe(true);
      expect(reasons.some((r) => /auth_type is LOCAL/.test(r))).toBe(true);
      expect(reasons.some((r) => /DISABLED/.test(r))).toBe(true);
      expect(reasons.some((r) => /userinfo refused/.test(r))).toBe(true);
      expect(reasons.some((r) => /email is not verified/.test(r))).toBe(true);
      expect(reasons.some((r) => /not configured/.test(r))).toBe(true);
      expect(lines.some((l) => l.msg === 'external login: the OpenID provider cannot be reached')).toBe(true);
      const text = log.join('');
      expect(seen.size).toBeGreaterThan(20);
      for (const token of seen) if (token.length >= 8) expect(text).not.toContain(token);
      for (const token of seen) {
        const signature = token.split('.')[2];
        if (signature && signature.length >= 16) expect(text).not.toContain(signature);
      }
      expect(text).not.toContain(CLIENT_SECRET);
    });
  });
});
