import { PlatformClient } from '@platform/client';
import { fail, serveAuth, type PluginServer } from '@platform/plugin-kit';
import { call, checkedFetch, startPlatform, type Platform } from './platform';

const API_KEY = 'e2e-plugin-api-key-5c0d9e';
const PASSWORD = 'e2e-sso-password-81f2aa';
const SUPERVISOR_SECRET = 'e2e-auth-supervisor-secret';
const USER = 'frida';

/**
 * External auth through an upstream-style ExternalAuth plugin, end to end behind nginx: a supervisor
 * publishes the plugin (a kit plugin on a real gRPC port), the domain admin sets it as the domain's
 * external auth, a user logs in with auth_type EXTERNAL (created on first login, auto_user_sync), and
 * the platform's token works on another module.
 */
describe('external auth through a published ExternalAuth plugin, end to end', () => {
  let p: Platform;
  let plugin: PluginServer;
  let adminDomain: string;
  let adminRefresh: string;
  const secrets = new Set<string>([API_KEY, PASSWORD, SUPERVISOR_SECRET, 'e2e-admin-password']);

  beforeAll(async () => {
    plugin = await serveAuth({
      init: (r) => ({ metadata: { protocol: 'password', identity_provider: String(r.options.identity_provider ?? ''), domain: r.domain_id } }),
      authorize: (r) => {
        const c = r.credentials as { user_id?: string; password?: string };
        // Quotes what it was sent in its refusal, secrets and all, as careless plugins do.
        if (r.secret_data.api_key !== API_KEY || c.password !== PASSWORD) throw fail.authenticateFailure(`refused ${JSON.stringify(r)}`);
        return { user_id: String(c.user_id), name: 'Frida', email: `${c.user_id}@example.com`, state: 'ENABLED' };
      },
    });
    p = await startPlatform({ LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    await p?.stop();
    plugin?.kill();
  });
  const as = (token: string) => (route: string, body: unknown) => call(p.base, route, body, token);
  const ok = async (res: Promise<{ status: number; body: any }>) => {
    const r = await res;
    expect([r.status, r.status === 200 ? 'ok' : r.body]).toEqual([200, 'ok']);
    return r.body;
  };
  const issue = (credentials: object) => call(p.base, '/identity/v2/token/issue', { domain_id: 'domain-local', auth_type: 'EXTERNAL', credentials });

  it('the domain admin publishes the plugin and sets it as the domain\'s external auth: init\'s metadata is answered, secret_data never', async () => {
    const session = await new PlatformClient({ endpoint: p.base, fetch: checkedFetch }).login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password' });
    adminDomain = session.access_token;
    adminRefresh = session.refresh_token!;
    secrets.add(adminDomain).add(adminRefresh);
    const admin = as(adminDomain);
    await ok(
      admin('/plugin/v1/supervisor/publish', {
        name: 'e2e-auth',
        hostname: 'e2e-auth-host',
        secret_key: SUPERVISOR_SECRET,
        plugin_info: [{ plugin_id: 'plugin-e2e-password-auth', version: '1.0.0', state: 'ACTIVE', endpoint: plugin.endpoint }],
      }),
    );
    const set = await ok(
      admin('/identity/v2/external-auth/set', {
        plugin_info: {
          plugin_id: 'plugin-e2e-password-auth',
          options: { protocol: 'password', identity_provider: 'e2e-directory', auto_user_sync: true },
          secret_data: { api_key: API_KEY },
        },
      }),
    );
    expect(set).toMatchObject({
      state: 'ENABLED',
      plugin_info: { plugin_id: 'plugin-e2e-password-auth', version: '1.0.0', metadata: { protocol: 'password', identity_provider: 'e2e-directory', domain: 'domain-local' } },
    });
    expect(JSON.stringify(set)).not.toContain(API_KEY);
  });

  it('token/issue EXTERNAL: the plugin refuses a wrong password with the one 401; the right one creates the user, whose token works on another module', async () => {
    const refused = await issue({ user_id: USER, password: 'not-the-password-1' });
    secrets.add('not-the-password-1');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);

    const first = await ok(issue({ user_id: USER, password: PASSWORD }));
    secrets.add(first.access_token).add(first.refresh_token);
    // Created on first login, EXTERNAL; the admin binds them to the bootstrap workspace as a member.
    const admin = as(adminDomain);
    expect(await ok(admin('/identity/v2/user/get', { user_id: USER }))).toMatchObject({ user_id: USER, auth_type: 'EXTERNAL', state: 'ENABLED', email: `${USER}@example.com` });
    await ok(admin('/identity/v2/role-binding/create', { user_id: USER, role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: 'workspace-local' }));

    const granted = await ok(call(p.base, '/identity/v2/token/grant', { grant_type: 'REFRESH_TOKEN', token: first.refresh_token, scope: 'WORKSPACE', workspace_id: 'workspace-local' }));
    secrets.add(granted.access_token);
    expect(granted).toMatchObject({ role_type: 'WORKSPACE_MEMBER', workspace_id: 'workspace-local' });
    const list = await ok(as(granted.access_token)('/inventory/v1/cloud-service/list', {}));
    expect(list).toMatchObject({ results: expect.any(Array) });
    expect((await as(granted.access_token)('/monitoring/v1/webhook/list', {})).status).toBe(200);
  });

  it('a plugin that went away is a 503, never a 500', async () => {
    plugin.kill();
    const down = await issue({ user_id: USER, password: PASSWORD });
    expect([down.status, down.body.error.code]).toEqual([503, 'ERROR_PLUGIN_UNAVAILABLE']);
  });

  it('no process logged secret_data, a password or a token, though the plugin quoted them', () => {
    const logs = p.logs();
    for (const s of secrets) expect([s.slice(0, 12), logs.includes(s)]).toEqual([s.slice(0, 12), false]);
    expect(logs).toContain('external login refused');
  });
});
