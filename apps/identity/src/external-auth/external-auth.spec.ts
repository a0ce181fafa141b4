import request from 'supertest';
import { bearer, FakeProvider, startOidcProvider, type FakeRealm, type RealProvider } from '@platform/testing';
import { isSealedJson } from '@platform/secrets';
import { createTestIdentity, seedDomain } from '../test-support';
import { openExternalAuthSecret } from './secret';
import { LOOPBACK_ONLY, NO_PRIVATE_DESTINATIONS } from '@platform/net';

const CLIENT_SECRET = 'client-secret-9f2c41d7';
const EXTERNAL = { outbound: LOOPBACK_ONLY, timeoutMs: 1000, cacheSeconds: 600, jwksCooldownSeconds: 1, clockSkewSeconds: 30 };

describe('identity external-auth set/unset/get', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let provider: RealProvider;
  let fake: FakeProvider;
  let realm: FakeRealm;
  let admin: string;
  let owner: string;
  let member: string;
  let otherAdmin: string;

  beforeAll(async () => {
    [t, provider, fake] = await Promise.all([
      createTestIdentity({ externalAuth: { ...EXTERNAL } }),
      startOidcProvider('platform', CLIENT_SECRET),
      new FakeProvider().start(),
    ]);
    realm = await fake.realm('acme');
    await seedDomain(t.admin, 'd1');
    await seedDomain(t.admin, 'd2');
    admin = await bearer({ domainId: 'd1', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
    owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER', userId: 'owner' });
    member = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_MEMBER', userId: 'member' });
    otherAdmin = await bearer({ domainId: 'd2', roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  });
  afterAll(async () => {
    await Promise.all([t.close(), provider.stop(), fake.stop()]);
  });

  const call = (verb: string, auth: string, body: object = {}) =>
    request(t.app).post(`/identity/v2/external-auth/${verb}`).set('Authorization', auth).send(body);
  const oidc = (options: object, extra: object = {}) => ({
    plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options: { issuer: provider.issuer, client_id: 'platform', ...options }, ...extra },
  });
  const expectError = (res: request.Response, status: number, code: string, key?: string) => {
    expect([res.status, res.body.error?.code]).toEqual([status, code]);
    if (key) expect(res.body.error.message).toContain(`key = ${key}`);
  };

  it('answers state DISABLED (not a 404) while nothing is set, like upstream', async () => {
    const res = await call('get', admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ domain_id: 'd1', state: 'DISABLED', updated_at: '' });
  });

  it('sets the OIDC plugin: every field of ExternalAuthInfo, the provider\'s endpoints as metadata, no secret', async () => {
    const res = await call('set', admin, oidc({}, { version: '1.0', secret_data: { client_secret: CLIENT_SECRET } }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      domain_id: 'd1',
      state: 'ENABLED',
      plugin_info: {
        plugin_id: 'plugin-oidc-identity-auth',
        version: '1.0',
        upgrade_mode: 'AUTO',
        options: { issuer: provider.issuer, client_id: 'platform', user_id_claim: 'email' },
        metadata: {
          protocol: 'oidc',
          issuer: provider.issuer,
          client_id: 'platform',
          jwks_uri: `${provider.issuer}/jwks`,
          authorization_endpoint: `${provider.issuer}/auth`,
          token_endpoint: `${provider.issuer}/token`,
          userinfo_endpoint: `${provider.issuer}/me`,
          end_session_endpoint: `${provider.issuer}/session/end`,
        },
        secret_id: '',
        schema_id: '',
      },
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(res.text).not.toContain(CLIENT_SECRET);
    const got = await call('get', admin);
    expect(got.body).toEqual(res.body);
    expect(got.text).not.toContain(CLIENT_SECRET);
  });

  it('keeps secret_data sealed in its row, bound to the domain', async () => {
    const row = await t.prisma.externalAuth.findUniqueOrThrow({ where: { domain_id: 'd1' } });
    expect(isSealedJson(row.secret_data)).toBe(true);
    expect(JSON.stringify(row)).not.toContain(CLIENT_SECRET);
    expect(openExternalAuthSecret(t.deps.config.secretKeys, row)).toEqual({ client_secret: CLIENT_SECRET });
    // Copied to another domain's row, it does not open.
    expect(() => openExternalAuthSecret(t.deps.config.secretKeys, { ...row, domain_id: 'd2' })).toThrow(/does not open/);
  });

  it('is per domain: another domain\'s admin sees nothing set, and cannot name d1 in the body', async () => {
    expect((await call('get', otherAdmin)).body).toEqual({ domain_id: 'd2', state: 'DISABLED', updated_at: '' });
    const cross = await call('get', otherAdmin, { domain_id: 'd1' });
    expect(cross.status).toBeGreaterThanOrEqual(400);
    expect(cross.status).toBeLessThan(500);
  });

  it('is for DOMAIN_ADMIN only: 403 for a workspace owner or member, 401 without a token', async () => {
    for (const who of [owner, member]) {
      for (const verb of ['set', 'unset', 'get']) {
        const res = await call(verb, who, verb === 'set' ? oidc({}) : {});
        expectError(res, 403, 'ERROR_PERMISSION_DENIED');
      }
    }
    expectError(await request(t.app).post('/identity/v2/external-auth/get').send({}), 401, 'ERROR_AUTHENTICATE_FAILURE');
  });

  it('refuses a plugin that is neither built in nor published (here: no plugin module at all) with a 404', async () => {
    const res = await call('set', admin, { plugin_info: { plugin_id: 'plugin-googleoauth2-identity-auth', options: { issuer: provider.issuer, client_id: 'x' } } });
    expectError(res, 404, 'ERROR_NOT_FOUND');
    expect(res.body.error.message).toContain('plugin_id = plugin-googleoauth2-identity-auth');
  });

  it('validates the request before anything else: required, unknown and malformed fields', async () => {
    expectError(await call('set', admin, {}), 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info');
    expectError(await call('set', admin, { plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options: { client_id: 'x' } } }), 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.options.issuer');
    expectError(await call('set', admin, { plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options: { issuer: provider.issuer } } }), 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.options.client_id');
    expectError(await call('set', admin, { plugin_info: { plugin_id: 'plugin-oidc-identity-auth' } }), 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.options');
    expectError(await call('set', admin, { ...oidc({}), extra: 1 }), 400, 'ERROR_INVALID_PARAMETER', 'extra');
    expectError(await call('set', admin, oidc({ scope: 'openid' })), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.scope');
    expectError(await call('set', admin, oidc({}, { secret_data: { client_secret: 'x', token: 'y' } })), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.secret_data.token');
    expectError(await call('set', admin, oidc({}, { metadata: {} })), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.metadata');
    for (const issuer of ['not a url', 'ftp://sso.example.com', 'https://user:pw@sso.example.com', 'https://sso.example.com/?a=1', 'x'.repeat(3000)]) {
      expectError(await call('set', admin, oidc({ issuer })), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.issuer');
    }
    for (const user_id_claim of ['__proto__', 'constructor', 'prototype', 'a b']) {
      expectError(await call('set', admin, oidc({ user_id_claim })), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.user_id_claim');
    }
    // "" is unset as proto3 sees it: REQUIRED, as every empty value that fails (docs/decisions/api.md)
    expectError(await call('set', admin, oidc({ user_id_claim: '' })), 400, 'ERROR_REQUIRED_PARAMETER', 'plugin_info.options.user_id_claim');
    expectError(await call('set', admin, oidc({ client_id: 'c'.repeat(256) })), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.client_id');
    // A JSON body whose own keys are __proto__/constructor is refused as unknown fields, never merged.
    const proto = await request(t.app)
      .post('/identity/v2/external-auth/set')
      .set('Authorization', admin)
      .set('Content-Type', 'application/json')
      .send(`{"plugin_info":{"plugin_id":"plugin-oidc-identity-auth","options":{"issuer":"${provider.issuer}","client_id":"x","__proto__":{"user_id_claim":"sub"}}}}`);
    expect(proto.status).toBe(400);
    expect(({} as Record<string, unknown>).user_id_claim).toBeUndefined();
  });

  it('accepts a proto3 client\'s request (every field present, unset ones at their defaults)', async () => {
    const res = await call('set', admin, {
      domain_id: 'd1',
      plugin_info: { plugin_id: 'plugin-oidc-identity-auth', version: '', upgrade_mode: 'NONE', options: { issuer: provider.issuer, client_id: 'platform', user_id_claim: 'sub' }, secret_data: {}, schema_id: '' },
    });
    expect(res.status).toBe(200);
    expect(res.body.plugin_info).toMatchObject({ version: '', upgrade_mode: 'AUTO', options: { user_id_claim: 'sub' } });
    // Set replaces: no client_secret given, none kept.
    expect((await t.prisma.externalAuth.findUniqueOrThrow({ where: { domain_id: 'd1' } })).secret_data).toBeNull();
  });

  it('asks the provider first: a wrong, unreachable or hung issuer is the one uniform refusal', async () => {
    const refusal = (res: request.Response) => {
      expectError(res, 400, 'ERROR_OUTBOUND_REFUSED', 'plugin_info.options.issuer');
      return res.body.error.message as string;
    };
    const messages = [refusal(await call('set', admin, oidc({ issuer: `${provider.issuer}/` })))];
    messages.push(refusal(await call('set', admin, oidc({ issuer: `${fake.base}/nowhere` }))));
    realm.mode = 'hang';
    const started = Date.now();
    messages.push(refusal(await call('set', admin, oidc({ issuer: realm.issuer }))));
    expect(Date.now() - started).toBeLessThan(5000);
    realm.mode = 'error';
    messages.push(refusal(await call('set', admin, oidc({ issuer: realm.issuer }))));
    messages.push(refusal(await call('set', admin, oidc({ issuer: 'http://127.0.0.1:1' }))));
    expect(new Set(messages).size).toBe(1);
    expect(messages[0]).not.toContain(provider.issuer);
    realm.mode = 'ok';
    expect((await call('set', admin, oidc({ issuer: realm.issuer }))).status).toBe(200);
  });

  it('refuses an issuer on a private address the allow-list does not name, with the same refusal', async () => {
    t.deps.config.externalAuth.outbound = NO_PRIVATE_DESTINATIONS;
    try {
      // http to an unlisted host: the issuer's form is refused first (https is required outside the list)
      expectError(await call('set', admin, oidc({})), 400, 'ERROR_INVALID_PARAMETER', 'plugin_info.options.issuer');
      expectError(await call('set', admin, oidc({ issuer: 'https://127.0.0.1:1/realms/x' })), 400, 'ERROR_OUTBOUND_REFUSED', 'plugin_info.options.issuer');
    } finally {
      t.deps.config.externalAuth.outbound = LOOPBACK_ONLY;
    }
  });

  it('unsets: state DISABLED, then get answers DISABLED, a second unset is 404 (upstream), EXTERNAL login not configured', async () => {
    expect((await call('set', admin, oidc({}, { secret_data: { client_secret: CLIENT_SECRET } }))).status).toBe(200);
    const res = await call('unset', admin);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ domain_id: 'd1', state: 'DISABLED', updated_at: '' });
    expect(await t.prisma.externalAuth.count({ where: { domain_id: 'd1' } })).toBe(0);
    expect((await call('get', admin)).body.state).toBe('DISABLED');
    expectError(await call('unset', admin), 404, 'ERROR_NOT_FOUND');
    const login = await request(t.app)
      .post('/identity/v2/token/issue')
      .send({ domain_id: 'd1', auth_type: 'EXTERNAL', credentials: { access_token: 'whatever' } });
    expectError(login, 401, 'ERROR_AUTHENTICATE_FAILURE');
  });

  it('documents every operation and field in the OpenAPI document', async () => {
    const doc = (await request(t.app).get('/identity/openapi.json')).body;
    for (const verb of ['set', 'unset', 'get']) {
      const op = doc.paths[`/identity/v2/external-auth/${verb}`].post;
      expect(op.summary).toMatch(/\s/);
      expect(op['x-role-types']).toEqual(['DOMAIN_ADMIN']);
    }
    const set = doc.paths['/identity/v2/external-auth/set'].post.requestBody.content['application/json'].schema;
    const plugin = set.properties.plugin_info;
    for (const [k, v] of Object.entries({ ...plugin.properties, ...plugin.properties.options.properties })) {
      expect([k, typeof (v as { description?: string }).description]).toEqual([k, 'string']);
    }
  });
});
