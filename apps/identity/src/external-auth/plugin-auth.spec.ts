import { Writable } from 'node:stream';
import request from 'supertest';
import { decodeJwt } from 'jose';
import { createLogger } from '@platform/core';
import { createPool } from '@platform/db';
import { EndpointChanges, PluginClients, DEFAULT_PLUGIN_CLIENT_CONFIG, PluginEndpointResolver, tableSource, type Identity } from '@platform/plugin';
import { fail, serveAuth, type PluginServer } from '@platform/plugin-kit';
import { isSealedJson } from '@platform/secrets';
import { bearer, createTempDatabase, testVerifier, type TempDatabase } from '@platform/testing';
import { createTestIdentity, seedDomain } from '../test-support';
import { openExternalAuthSecret } from './secret';

const SECRET = 'plugin-api-key-6d1f0e9b27';
const PASSWORD = 'alice-password-93c1a7';
const OPTION_SECRET = 'option-token-47be2a90';
const FAILURE = { error: { code: 'ERROR_AUTHENTICATE_FAILURE', message: 'Authenticate failure. (credentials are invalid)', status: 401 } };

/**
 * token/issue EXTERNAL and external-auth/set through a published ExternalAuth plugin (a kit plugin on
 * a real gRPC port), its endpoint read from a real plugin module table (platform_plugin's schema) by
 * libs/plugin's resolver, changes announced on real Redis.
 */
describe('identity external auth through an ExternalAuth plugin', () => {
  let t: Awaited<ReturnType<typeof createTestIdentity>>;
  let pluginDb: TempDatabase;
  let resolver: PluginEndpointResolver;
  let changes: EndpointChanges;
  const clients = new PluginClients({ ...DEFAULT_PLUGIN_CLIENT_CONFIG, retryAttempts: 1, timeouts: { ...DEFAULT_PLUGIN_CLIENT_CONFIG.timeouts, authorize: 2000, init: 2000 } });
  const servers: PluginServer[] = [];
  const log: string[] = [];
  const inits: Identity.InitRequest[] = [];
  const authorizes: Identity.AuthorizeRequest[] = [];
  let plugin: PluginServer;

  /** An upstream-style password plugin: init answers its login form; authorize checks a password with its API key. */
  const startPlugin = () =>
    serveAuth({
      init: (r) => {
        inits.push(r);
        if (r.options.echo === true) throw fail.invalidParameter('options', JSON.stringify(r.options));
        return { metadata: { protocol: 'password', identity_provider: String(r.options.identity_provider ?? ''), login_form: { fields: ['user_id', 'password'] }, domain: r.domain_id } };
      },
      authorize: (r) => {
        authorizes.push(r);
        const c = r.credentials as { user_id?: string; password?: string; mode?: string };
        // A careless plugin: its errors quote the whole request, secrets and credentials included.
        if (c.mode === 'echo') throw fail.unknown(`cannot authorize ${JSON.stringify(r)}`);
        if (c.mode === 'invalid') throw fail.invalidParameter('credentials', JSON.stringify(r.credentials));
        if (c.mode === 'empty') return { user_id: '' };
        if (r.secret_data.api_key !== SECRET) throw fail.permissionDenied();
        if (c.password !== PASSWORD) throw fail.authenticateFailure(`wrong password ${c.password}`);
        const state = c.user_id === 'gone' ? 'DISABLED' : 'ENABLED';
        return { user_id: String(c.user_id), name: `${c.user_id} Example`, email: `${c.user_id}@example.com`, state };
      },
    });

  const admin = (domainId: string) => bearer({ domainId, roleType: 'DOMAIN_ADMIN', userId: 'admin' });
  const set = async (domainId: string, plugin_info: object) =>
    request(t.app).post('/identity/v2/external-auth/set').set('Authorization', await admin(domainId)).send({ plugin_info });
  const issue = (domainId: string, credentials: Record<string, unknown>) => request(t.app).post('/identity/v2/token/issue').send({ domain_id: domainId, auth_type: 'EXTERNAL', credentials });
  const expectFailure = (res: request.Response) => expect([res.status, res.body]).toEqual([401, FAILURE]);

  /** What a supervisor's publish writes (the plugin module's rows), announced as the plugin module does. */
  const publish = async (domainId: string, pluginId: string, version: string, endpoint: string, hostname = `host-${pluginId}-${version}`) => {
    const supervisorId = `sv-${hostname}`;
    await pluginDb.pool.query(
      `INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ($1, $2, $3, $3, 'x') ON CONFLICT (supervisor_id) DO NOTHING`,
      [domainId, supervisorId, hostname],
    );
    await pluginDb.pool.query(
      `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint, plugin_key)
       VALUES ($1, $2, $3, $3, $4, $5, 'ACTIVE', $6, $1 || ' ' || $4 || ' ' || $5)
       ON CONFLICT (supervisor_id, plugin_id, version) DO UPDATE SET endpoint = EXCLUDED.endpoint`,
      [supervisorId, domainId, hostname, pluginId, version, endpoint],
    );
    await changes.announce({ domainId, pluginIds: [pluginId] });
  };
  const withdraw = async (domainId: string, pluginId: string) => {
    await pluginDb.pool.query('DELETE FROM installed_plugin WHERE domain_id = $1 AND plugin_id = $2', [domainId, pluginId]);
    await changes.announce({ domainId, pluginIds: [pluginId] });
  };
  const passwordAuth = (o: object = {}) => ({
    plugin_id: 'plugin-password-identity-auth',
    options: { protocol: 'password', identity_provider: 'corp-directory', [`api_token`]: OPTION_SECRET, ...o },
    secret_data: { api_key: SECRET, nested: { region: 'eu' } },
    schema_id: 'password-api-key',
  });

  beforeAll(async () => {
    const generous = { points: 10_000, seconds: 60 };
    [t, pluginDb] = await Promise.all([createTestIdentity({ issueRateLimit: { perAddress: generous, perUser: generous } }), createTempDatabase({ app: 'plugin' })]);
    const sink = new Writable({ write: (c, _e, cb) => (log.push(String(c)), cb()) });
    t.deps.logger = createLogger('identity', 'info', sink);
    resolver = new PluginEndpointResolver(t.deps.redis, tableSource(pluginDb.pool), { prefix: t.deps.redisPrefix });
    await resolver.start();
    changes = new EndpointChanges(t.deps.redis, t.deps.redisPrefix);
    t.deps.plugins = { resolver, clients };
    plugin = await startPlugin();
    servers.push(plugin);
    for (const d of ['d1', 'd2', 'd3', 'd4']) await seedDomain(t.admin, d);
    for (const d of ['d1', 'd2', 'd3', 'd4']) await publish(d, 'plugin-password-identity-auth', '1.2.0', plugin.endpoint, `h-${d}`);
    await publish('d1', 'plugin-password-identity-auth', '1.10.0', plugin.endpoint, 'h-d1-new');
    await t.prisma.user.create({ data: { domain_id: 'd1', user_id: 'alice', auth_type: 'EXTERNAL' } });
    await t.prisma.user.create({ data: { domain_id: 'd1', user_id: 'carol', auth_type: 'EXTERNAL', state: 'DISABLED' } });
    await t.prisma.user.create({ data: { domain_id: 'd4', user_id: 'alice', auth_type: 'EXTERNAL' } });
  });
  afterAll(async () => {
    resolver?.stop();
    clients.close();
    for (const s of servers) s.kill();
    await t?.close();
    await pluginDb?.drop();
  });

  it('set: init(options, domain_id) is asked, its metadata kept and answered; options and secret_data are free Structs; the newest version with AUTO', async () => {
    inits.length = 0;
    const res = await set('d1', passwordAuth());
    expect(res.status).toBe(200);
    const metadata = { protocol: 'password', identity_provider: 'corp-directory', login_form: { fields: ['user_id', 'password'] }, domain: 'd1' };
    expect(res.body).toEqual({
      domain_id: 'd1',
      state: 'ENABLED',
      plugin_info: {
        plugin_id: 'plugin-password-identity-auth',
        version: '1.10.0',
        upgrade_mode: 'AUTO',
        options: passwordAuth().options,
        metadata,
        secret_id: '',
        schema_id: 'password-api-key',
      },
      updated_at: expect.any(String),
    });
    // upstream's init: options and domain_id, never secret_data.
    expect(inits).toEqual([{ options: passwordAuth().options, domain_id: 'd1' }]);
    expect(JSON.stringify(res.body)).not.toContain(SECRET);
    const get = await request(t.app).post('/identity/v2/external-auth/get').set('Authorization', await admin('d1')).send({});
    expect(get.body).toEqual(res.body);
    // secret_data is sealed at rest, bound to its domain, and opens to what was given.
    const row = await t.prisma.externalAuth.findUniqueOrThrow({ where: { domain_id: 'd1' } });
    expect(isSealedJson(row.secret_data)).toBe(true);
    expect(JSON.stringify(row.secret_data)).not.toContain(SECRET);
    expect(openExternalAuthSecret(t.deps.config.secretKeys, row)).toEqual({ api_key: SECRET, nested: { region: 'eu' } });
  });

  it('set: MANUAL keeps the version asked for (none: a 400); a version or a plugin nobody published is a 404; a plugin\'s refusal is its 400, redacted', async () => {
    const manual = await set('d2', { ...passwordAuth(), version: '1.2.0', upgrade_mode: 'MANUAL' });
    expect([manual.status, manual.body.plugin_info?.version, manual.body.plugin_info?.upgrade_mode]).toEqual([200, '1.2.0', 'MANUAL']);
    const missing = await set('d2', { ...passwordAuth(), version: '9.9.9', upgrade_mode: 'MANUAL' });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'ERROR_NOT_FOUND']);
    const unknown = await set('d2', { ...passwordAuth(), plugin_id: 'plugin-nobody-published' });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'ERROR_NOT_FOUND']);
    // The plugin quotes the options it was given: a secret-looking option never comes back.
    const refused = await set('d2', passwordAuth({ echo: true }));
    expect([refused.status, refused.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect(refused.text).not.toContain(OPTION_SECRET);
    // MANUAL needs its version (upstream's plugin service): a 400 before anything is resolved.
    for (const plugin_info of [{ ...passwordAuth(), upgrade_mode: 'MANUAL' }, { ...passwordAuth(), version: '', upgrade_mode: 'MANUAL' }]) {
      const noVersion = await set('d2', plugin_info);
      expect([noVersion.status, noVersion.body.error.code, noVersion.body.error.message]).toEqual([400, 'ERROR_REQUIRED_PARAMETER', expect.stringContaining('plugin_info.version')]);
    }
    // Still the MANUAL configuration: a refused set changes nothing.
    const row = await t.prisma.externalAuth.findUniqueOrThrow({ where: { domain_id: 'd2' } });
    expect(row.version).toBe('1.2.0');
  });

  it('set: options and secret_data are bounded Structs; the built-in OIDC still checks its own keys', async () => {
    const big = await set('d3', passwordAuth({ blob: 'x'.repeat(70_000) }));
    expect([big.status, big.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    const oidc = await set('d3', { plugin_id: 'plugin-oidc-identity-auth', options: { issuer: 'https://sso.example.com', client_id: 'x', identity_provider: 'y' } });
    expect([oidc.status, oidc.body.error.code]).toEqual([400, 'ERROR_INVALID_PARAMETER']);
    expect(oidc.body.error.message).toContain('plugin_info.options.identity_provider');
  });

  it('token/issue EXTERNAL: authorize gets what upstream sends, the user it names gets platform tokens that other modules accept', async () => {
    authorizes.length = 0;
    const res = await issue('d1', { user_id: 'alice', password: PASSWORD });
    expect(res.status).toBe(200);
    expect(authorizes).toEqual([
      {
        options: passwordAuth().options,
        schema_id: 'password-api-key',
        secret_data: { api_key: SECRET, nested: { region: 'eu' } },
        credentials: { user_id: 'alice', password: PASSWORD },
        metadata: { protocol: 'password', identity_provider: 'corp-directory', login_form: { fields: ['user_id', 'password'] }, domain: 'd1' },
        domain_id: 'd1',
      },
    ]);
    // Every module checks tokens with identity's public key (libs/auth TokenVerifier), as here.
    const claims = await testVerifier.verify(res.body.access_token);
    expect(claims).toMatchObject({ user_id: 'alice', domain_id: 'd1', scope: 'USER', token_type: 'ACCESS_TOKEN' });
    expect(decodeJwt(res.body.refresh_token)).toMatchObject({ user_id: 'alice', token_type: 'REFRESH_TOKEN' });
    const grant = await request(t.app).post('/identity/v2/token/grant').send({ grant_type: 'REFRESH_TOKEN', token: res.body.refresh_token, scope: 'USER' });
    expect([grant.status, grant.body.role_type]).toEqual([200, 'USER']);
    expect(await testVerifier.verify(grant.body.access_token)).toMatchObject({ user_id: 'alice', domain_id: 'd1' });
  });

  it('refuses with the one 401 of every login: a wrong password, any plugin error, an unknown, LOCAL or disabled user, no user_id', async () => {
    const notConfigured = await issue('d4', { user_id: 'alice', password: PASSWORD });
    expectFailure(notConfigured);
    for (const credentials of [
      { user_id: 'alice', password: 'wrong-password-1' }, // UNAUTHENTICATED
      { user_id: 'alice', password: PASSWORD, mode: 'invalid' }, // INVALID_ARGUMENT
      { user_id: 'alice', password: PASSWORD, mode: 'echo' }, // INTERNAL
      { user_id: 'alice', mode: 'empty' }, // no user_id
      { user_id: 'nobody', password: PASSWORD }, // not a user, no auto_user_sync
      { user_id: 'admin', password: PASSWORD }, // a LOCAL user
      { user_id: 'carol', password: PASSWORD }, // DISABLED
    ]) {
      expectFailure(await issue('d1', credentials));
    }
    expect(await t.prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: 'd1', user_id: 'nobody' } } })).toBeNull();
    const none = await issue('d1', {});
    expect([none.status, none.body.error.code]).toEqual([400, 'ERROR_REQUIRED_PARAMETER']);
  });

  it('creates the user on first login when options.auto_user_sync is true (upstream), EXTERNAL, with the plugin\'s name and email', async () => {
    expect((await set('d3', passwordAuth({ auto_user_sync: true }))).status).toBe(200);
    const first = await issue('d3', { user_id: 'Dave', password: PASSWORD });
    expect(first.status).toBe(200);
    expect(decodeJwt(first.body.access_token)).toMatchObject({ user_id: 'dave', domain_id: 'd3' });
    const dave = await t.prisma.user.findUniqueOrThrow({ where: { domain_id_user_id: { domain_id: 'd3', user_id: 'dave' } } });
    expect(dave).toMatchObject({ auth_type: 'EXTERNAL', state: 'ENABLED', name: 'Dave Example', email: 'Dave@example.com', password_hash: '' });
    expect((await issue('d3', { user_id: 'dave', password: PASSWORD })).status).toBe(200);
    // A user the plugin answers DISABLED is not created; a LOCAL user of the same name is never taken over.
    expectFailure(await issue('d3', { user_id: 'gone', password: PASSWORD }));
    expect(await t.prisma.user.findUnique({ where: { domain_id_user_id: { domain_id: 'd3', user_id: 'gone' } } })).toBeNull();
    expectFailure(await issue('d3', { user_id: 'member', password: PASSWORD }));
    // Two first logins at once: one creates, both log in.
    const both = await Promise.all([issue('d3', { user_id: 'erin', password: PASSWORD }), issue('d3', { user_id: 'erin', password: PASSWORD })]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
  });

  it('a plugin that is down, or withdrawn since the auth was set, is a 503; never a 500, never the built-in', async () => {
    const other = await startPlugin();
    servers.push(other);
    await publish('d2', 'plugin-password-identity-auth', '1.2.0', other.endpoint, 'h-d2');
    await t.prisma.user.create({ data: { domain_id: 'd2', user_id: 'alice', auth_type: 'EXTERNAL' } });
    expect((await issue('d2', { user_id: 'alice', password: PASSWORD })).status).toBe(200);
    other.kill();
    const down = await issue('d2', { user_id: 'alice', password: PASSWORD });
    expect([down.status, down.body.error.code, down.headers['retry-after']]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE', '5']);
    expect(down.body.error.message).toBe('The external authentication plugin cannot be reached; try again later.');
    await withdraw('d2', 'plugin-password-identity-auth');
    const gone = await issue('d2', { user_id: 'alice', password: PASSWORD });
    expect([gone.status, gone.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
  });

  it('a configuration stored before the one upgrade_mode rule (MANUAL without a version) is a 503 at login, never a 400', async () => {
    await seedDomain(t.admin, 'd5');
    await publish('d5', 'plugin-password-identity-auth', '1.2.0', plugin.endpoint, 'h-d5');
    expect((await set('d5', passwordAuth())).status).toBe(200);
    await t.prisma.user.create({ data: { domain_id: 'd5', user_id: 'alice', auth_type: 'EXTERNAL' } });
    expect((await issue('d5', { user_id: 'alice', password: PASSWORD })).status).toBe(200);
    await t.prisma.externalAuth.update({ where: { domain_id: 'd5' }, data: { upgrade_mode: 'MANUAL', version: '' } });
    const res = await issue('d5', { user_id: 'alice', password: PASSWORD });
    expect([res.status, res.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
  });

  it('an unreadable plugin table is a 503, for a published plugin and for the built-in OIDC id alike (no silent fall-back)', async () => {
    const broken = createPool('postgresql://postgres@127.0.0.1:5432/platform_plugin_does_not_exist', { max: 1, connectionTimeoutMillis: 1000 });
    broken.on('error', () => {});
    const saved = t.deps.plugins;
    t.deps.plugins = { resolver: new PluginEndpointResolver(t.deps.redis, tableSource(broken)), clients };
    try {
      const res = await issue('d1', { user_id: 'alice', password: PASSWORD });
      expect([res.status, res.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
      const oidc = await set('d4', { plugin_id: 'plugin-oidc-identity-auth', options: { issuer: 'https://sso.example.com', client_id: 'x' } });
      expect([oidc.status, oidc.body.error.code]).toEqual([503, 'ERROR_SERVICE_UNAVAILABLE']);
    } finally {
      t.deps.plugins = saved;
      await broken.end();
    }
  });

  it('a version published under the built-in OIDC id wins: its init and authorize serve, with free options', async () => {
    await publish('d4', 'plugin-oidc-identity-auth', '2.0.0', plugin.endpoint);
    const res = await set('d4', { ...passwordAuth(), plugin_id: 'plugin-oidc-identity-auth' });
    expect([res.status, res.body.plugin_info?.version, res.body.plugin_info?.metadata?.protocol]).toEqual([200, '2.0.0', 'password']);
    expect((await issue('d4', { user_id: 'alice', password: PASSWORD })).status).toBe(200);
  });

  it('never logs secret_data, credentials or option secrets, though the plugin quoted them; every refusal is logged with its reason', async () => {
    const text = log.join('');
    for (const secret of [SECRET, PASSWORD, OPTION_SECRET, 'wrong-password-1']) expect(text).not.toContain(secret);
    const lines = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { msg: string; reason?: string });
    const refusals = lines.filter((l) => l.msg === 'external login refused');
    expect(refusals.some((l) => l.reason?.includes('the plugin refused: ERROR_UNKNOWN') && l.reason.includes('***'))).toBe(true);
    expect(refusals.some((l) => l.reason === 'no such user in the domain')).toBe(true);
    expect(lines.some((l) => l.msg === 'external login: user created on first login')).toBe(true);
  });
});
