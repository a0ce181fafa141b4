import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PlatformApiError, PlatformClient } from '@platform/client';
import { undocumentedAnswers } from '@platform/http';
import { startOidcProvider, waitFor, type ProviderTokens, type RealProvider } from '@platform/testing';
import { call, checkedFetch, REPLICAS, startPlatform, type Platform } from './platform';

const fixtures = path.resolve(__dirname, '../fixtures');

/** Every operation of the API contract (shared/spec/platform-api.md), by module. */
const verbs = (prefix: string, list: string) => list.split(' ').map((v) => `${prefix}/${v}`);
const SPEC: Record<string, string[]> = {
  identity: [
    ...verbs('/identity/v2/token', 'issue grant'),
    '/identity/v1/endpoint/list',
    ...verbs('/identity/v2/project-group', 'create update change-parent-group delete add-users remove-users get list stat'),
  ],
  'cost-analysis': [
    ...verbs('/cost-analysis/v1/unified-cost', 'get list analyze stat'),
    ...verbs('/cost-analysis/v1/job-task', 'get list stat'),
    ...verbs('/cost-analysis/v1/exchange-rate', 'set reset enable disable get list'),
  ],
  statistics: verbs('/statistics/v1/storage', 'register update update-plugin verify-plugin enable disable deregister get list stat'),
  repository: verbs('/repository/v2/schema', 'create update sync delete get list stat'),
  monitoring: [
    ...verbs('/monitoring/v1/data-source', 'register update enable disable deregister update-plugin verify-plugin get list stat'),
    ...verbs('/monitoring/v1/webhook', 'create update update-plugin verify-plugin enable disable delete get list stat'),
    ...verbs('/monitoring/v1/event', 'create get list stat'),
  ],
  inventory: verbs('/inventory/v1/cloud-service', 'create update delete get list export analyze stat'),
  opsflow: verbs('/opsflow/v1/event', 'list stat'),
  plugin: [...verbs('/plugin/v1/supervisor', 'publish get list list-plugins deregister'), '/plugin/v1/plugin/get-plugin-endpoint'],
};

describe(`the platform end to end, through nginx (${REPLICAS} replica${REPLICAS > 1 ? 's' : ''} of every app and worker)`, () => {
  let p: Platform;
  let token: string; // workspace owner of the bootstrap workspace
  let domainToken: string;
  /** Every secret the run handles: none may appear in any process's log or the gateway's access log. */
  const secrets = new Set<string>(['e2e-admin-password', 'e2e-ingest-token', 'e2e-supervisor-secret']);

  beforeAll(async () => {
    // LOG_LEVEL=info: one line per request in every app, so the test of secrets sees what production logs.
    p = await startPlatform({ OPSFLOW_INGEST_TOKENS: 'e2e-ingest-token', OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1', LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    await p?.stop();
  });
  const post = (path: string, body: unknown, t = token) => call(p.base, path, body, t);

  /** The typed client (libs/client), logged in as the bootstrap admin in the first test. */
  let api: PlatformClient;

  it('gets a token as the bootstrap admin and grants workspace and domain scopes', async () => {
    api = new PlatformClient({ endpoint: p.base, fetch: checkedFetch });
    const ws = await api.login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password', workspaceId: 'workspace-local' });
    expect(ws).toMatchObject({ scope: 'WORKSPACE', workspace_id: 'workspace-local' });
    token = ws.access_token;
    const domain = await new PlatformClient({ endpoint: p.base, fetch: checkedFetch }).login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password' });
    domainToken = domain.access_token;
    // The grant answers the role the token carries.
    const grant = await api.call('/identity/v2/token/grant', { grant_type: 'REFRESH_TOKEN', token: ws.refresh_token!, scope: 'WORKSPACE', workspace_id: 'workspace-local' });
    expect(grant).toMatchObject({ role_type: 'WORKSPACE_OWNER', workspace_id: 'workspace-local' });
    for (const t of [ws.refresh_token!, domain.refresh_token!, token, domainToken, grant.access_token as string]) secrets.add(t);
    const anonymous = await call(p.base, '/identity/v2/project-group/list', {});
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
  });

  it('reaches every module through the gateway', async () => {
    const lists: Record<string, [string, object]> = {
      identity: ['/identity/v2/project-group/list', {}],
      'cost-analysis': ['/cost-analysis/v1/exchange-rate/list', { domain_id: 'domain-local' }],
      statistics: ['/statistics/v1/storage/list', { domain_id: 'domain-local' }],
      repository: ['/repository/v2/schema/list', { domain_id: 'domain-local' }],
      monitoring: ['/monitoring/v1/webhook/list', {}],
      inventory: ['/inventory/v1/cloud-service/list', {}],
      opsflow: ['/opsflow/v1/event/list', {}],
      plugin: ['/plugin/v1/supervisor/list', {}],
    };
    expect(p.apps.length).toBeGreaterThanOrEqual(6);
    for (const app of p.apps) {
      const [path, body] = lists[app];
      const t = app === 'statistics' || app === 'plugin' ? domainToken : token;
      const res = await post(path, body, t);
      expect([app, res.status]).toEqual([app, 200]);
      expect(res.body.total_count).toEqual(expect.any(Number));
      const doc = (await fetch(`${p.base}/${app}/openapi.json`).then((r) => r.json())) as { openapi: string; paths: Record<string, { post?: unknown }> };
      expect(doc.openapi).toBe('3.1.0');
      // The OpenAPI, generated from the operation tables, has every operation of the contract.
      const missing = SPEC[app].filter((op) => !doc.paths[op]?.post);
      expect([app, missing]).toEqual([app, []]);
      // Every operation declares its answer (not a bare object), and every $ref it uses resolves.
      expect([app, undocumentedAnswers(doc)]).toEqual([app, []]);
      const schemas = (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {};
      const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]);
      expect([app, refs.filter((name) => !(name in schemas))]).toEqual([app, []]);
      const page = await fetch(`${p.base}/${app}/docs`);
      expect(page.headers.get('content-type')).toMatch(/html/);
    }
    // The platform's API reference, through nginx to identity, and its assets.
    const docs = await fetch(`${p.base}/docs`);
    expect([docs.status, docs.headers.get('content-type')]).toEqual([200, expect.stringMatching(/html/)]);
    const html = await docs.text();
    for (const app of p.apps) expect(html).toContain(`/${app}/openapi.json`);
    const bundle = await fetch(`${p.base}/identity/docs/assets/swagger-ui-bundle.js`);
    expect([bundle.status, bundle.headers.get('content-type')]).toEqual([200, expect.stringMatching(/javascript/)]);
    const nowhere = await call(p.base, '/nowhere/v1/x/list', {});
    expect(nowhere.status).toBe(404);
  });

  it('builds a project-group tree and refuses a cycle', async () => {
    const top = await api.call('/identity/v2/project-group/create', { name: 'platform' });
    const sub = await api.call('/identity/v2/project-group/create', { name: 'sre', parent_group_id: top.project_group_id as string });
    const cycle = await api
      .call('/identity/v2/project-group/change-parent-group', { project_group_id: top.project_group_id as string, parent_group_id: sub.project_group_id as string })
      .catch((e: unknown) => e);
    expect(cycle).toBeInstanceOf(PlatformApiError);
    expect((cycle as PlatformApiError).code).toBe('ERROR_NOT_ALLOWED_TO_CHANGE_PARENT_GROUP_TO_SUB_PROJECT_GROUP');
    p.admin('project', 'create', '--domain-id', 'domain-local', '--workspace-id', 'workspace-local', '--project-id', 'project-e2e', '--name', 'E2E', '--project-group-id', sub.project_group_id as string);
  });

  it('turns an Alertmanager payload posted to a webhook URL into an event', async () => {
    const hook = await post('/monitoring/v1/webhook/create', {
      name: 'alertmanager',
      plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' },
      project_id: 'project-e2e',
    });
    expect(hook.status).toBe(200);
    expect(hook.body.webhook_url).toMatch(new RegExp(`^${p.base}/monitoring/v1/webhook/${hook.body.webhook_id}/[^/]+/events$`));
    const payload = readFileSync(path.join(fixtures, 'alertmanager.json'), 'utf8');
    secrets.add(hook.body.access_key);
    const posted = await fetch(hook.body.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
    // The key also travels in requests that meet no route: another method, another sub-path.
    await fetch(hook.body.webhook_url, { method: 'GET' });
    await fetch(hook.body.webhook_url.replace(/\/events$/, '/other/path'), { method: 'POST', body: '{}' });
    await fetch(hook.body.webhook_url.replace(hook.body.webhook_id, 'webhook-000000000000'), { method: 'POST', body: '{}' });
    expect(posted.status).toBe(200);
    const events = await waitFor(async () => {
      const res = await post('/monitoring/v1/event/list', { webhook_id: hook.body.webhook_id });
      return res.body.total_count > 0 ? res.body.results : undefined;
    }, 30_000, 'the event');
    expect(events[0]).toMatchObject({ event_type: 'ALERT', severity: 'CRITICAL', project_id: 'project-e2e', title: 'Instance down' });
  });

  it('a supervisor publishes plugin endpoints through the gateway; the domain resolves them, a workspace token cannot publish', async () => {
    const body = { name: 'e2e', hostname: 'e2e-host', secret_key: 'e2e-supervisor-secret', plugin_info: [{ plugin_id: 'plugin-e2e', version: '1.0.0', state: 'ACTIVE', endpoint: 'grpc://127.0.0.1:50999' }] };
    expect((await post('/plugin/v1/supervisor/publish', body, token)).status).toBe(403);
    const published = await post('/plugin/v1/supervisor/publish', body, domainToken);
    expect([published.status, published.body.domain_id]).toEqual([200, 'domain-local']);
    const resolved = await post('/plugin/v1/plugin/get-plugin-endpoint', { plugin_id: 'plugin-e2e', upgrade_mode: 'AUTO' }, domainToken);
    expect(resolved.body).toEqual({ endpoint: 'grpc://127.0.0.1:50999', updated_version: '1.0.0' });
    expect((await post('/plugin/v1/plugin/get-plugin-endpoint', { plugin_id: 'plugin-none' }, domainToken)).status).toBe(404);
  });

  it('records an opsflow event from a task action and lists it', async () => {
    const rec = await call(
      p.base,
      '/opsflow/v1/event/create',
      {
        event_key: 'task-1-created',
        domain_id: 'domain-local',
        project_id: 'project-e2e',
        task_id: 'task-1',
        event_type: 'CREATED',
        name: 'Task created',
        user_id: 'admin',
      },
      'e2e-ingest-token',
    );
    expect(rec.status).toBe(200);
    const list = await post('/opsflow/v1/event/list', { task_id: 'task-1' });
    expect(list.body.results[0]).toMatchObject({ task_id: 'task-1', event_type: 'CREATED', workspace_id: 'workspace-local' });
  });

  it('creates cloud services, lists them with the query DSL and exports them as CSV through a download URL', async () => {
    for (let i = 0; i < 30; i++) {
      await api.call('/inventory/v1/cloud-service/create', {
        cloud_service_type: 'Instance',
        cloud_service_group: 'EC2',
        provider: 'aws',
        name: `vm-${i}`,
        region_code: i % 2 ? 'us-east-1' : 'eu-west-1',
        ip_addresses: [`10.0.0.${i}`],
        data: { power_state: i % 3 ? 'running' : 'stopped', cpu: i % 4 },
        tags: { env: i % 2 ? 'prod' : 'dev' },
        project_id: 'project-e2e',
      });
    }
    const list = await api.call('/inventory/v1/cloud-service/list', {
      region_code: 'us-east-1',
      query: { filter: [{ key: 'data.power_state', value: 'running', operator: 'eq' }], sort: [{ key: 'name' }], page: { start: 1, limit: 5 } },
    });
    expect(list.total_count).toBe(10);
    expect(list.results).toHaveLength(5);
    const byGroup = await post('/inventory/v1/cloud-service/list', { ip_address: '10.0.0.7' });
    expect(byGroup.body.results.map((c: { name: string }) => c.name)).toEqual(['vm-7']);

    const exp = await post('/inventory/v1/cloud-service/export', {
      file_format: 'CSV',
      file_name: 'vms',
      options: [{ name: 'VMs', query_type: 'SEARCH', search_query: { filter: [{ key: 'tags.env', value: 'prod', operator: 'eq' }], fields: ['name', 'region_code'], sort: [{ key: 'name' }] } }],
    });
    expect(exp.status).toBe(200);
    expect(exp.body.download_url.startsWith(`${p.base}/inventory/`)).toBe(true);
    secrets.add(exp.body.download_url.split('/').pop());
    const file = await fetch(exp.body.download_url);
    expect(file.status).toBe(200);
    const lines = (await file.text()).trim().split(/\r?\n/);
    expect(lines).toHaveLength(16); // header + 15 prod machines
    expect(lines[1]).toMatch(/^vm-1,us-east-1$/);
  });

  it('collects a cost CSV through a data source and the worker into unified costs, then analyzes them', async () => {
    const csv = readFileSync(path.join(fixtures, 'costs.csv'));
    const files = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/csv' }).end(csv));
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    try {
      const base_url = `http://127.0.0.1:${(files.address() as AddressInfo).port}/costs.csv`;
      const ds = await post('/cost-analysis/v1/data-source/register', {
        name: 'billing export',
        resource_group: 'WORKSPACE',
        plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url } },
        // Only the sync below runs: a run crossing the default 16:00 UTC slot would add a scheduled job.
        schedule: { state: 'DISABLED' },
      });
      expect(ds.status).toBe(200);
      const job = await post('/cost-analysis/v1/data-source/sync', { data_source_id: ds.body.data_source_id });
      expect(job.status).toBe(200);
      const done = await waitFor(async () => {
        const j = await post('/cost-analysis/v1/job/get', { job_id: job.body.job_id });
        return ['SUCCESS', 'FAILURE', 'CANCELED', 'TIMEOUT'].includes(j.body.status) ? j.body : undefined;
      }, 60_000, 'the collection job');
      expect(done.status).toBe('SUCCESS');
      const tasks = await post('/cost-analysis/v1/job-task/list', { job_id: job.body.job_id });
      expect(tasks.body.results[0]).toMatchObject({ status: 'SUCCESS', created_count: 5 });

      const analyzed = await post('/cost-analysis/v1/unified-cost/analyze', {
        is_confirmed: true,
        query: { granularity: 'MONTHLY', start: '2024-01', end: '2024-02', group_by: ['provider'], fields: { usd: { key: 'cost.USD', operator: 'sum' } }, sort: [{ key: 'provider' }] },
      });
      expect(analyzed.status).toBe(200);
      const byKey = Object.fromEntries(analyzed.body.results.map((r: { provider: string; date: string; usd: number }) => [`${r.provider} ${r.date}`, r.usd]));
      expect(byKey['aws 2024-01']).toBeCloseTo(14.75, 6);
      expect(byKey['aws 2024-02']).toBeCloseTo(20, 6);
      // 7.75 USD plus 1500 KRW at the default rate of configuration.
      const krwPerUsd = (await post('/cost-analysis/v1/exchange-rate/get', { domain_id: 'domain-local', currency: 'KRW' })).body.rate;
      expect(byKey['google_cloud 2024-02']).toBeCloseTo(7.75 + 1500 / krwPerUsd, 6);
    } finally {
      await new Promise((r) => files.close(r));
    }
  });

  /**
   * Issue #20's walk: a platform team onboards a team with single sign-on, all through the gateway. A
   * real OpenID provider (npm oidc-provider) runs beside the platform; its users log in with a real
   * authorization-code flow and hand its tokens to token/issue. The steps share state and run in order.
   * On this file's platform (one start for the whole file), and declared before the test of logs, which
   * Jest runs after it (tests and describes run in the order declared; the report lists nested describes
   * last): the provider's tokens and the client secrets gathered here are among the secrets it checks.
   */
  describe('onboarding a team with single sign-on', () => {
    const CLIENT_SECRET = 'e2e-oidc-client-secret-5d1f0a';
    /** Another application's client at the same provider: its tokens are not addressed to the platform. */
    const OTHER_CLIENT_SECRET = 'e2e-oidc-other-app-secret-8c27e4';
    const USER = 'dana@team.example'; // the provider's email claim, and so the platform user_id
    const FAILURE = { code: 'ERROR_AUTHENTICATE_FAILURE', status: 401 };
    let provider: RealProvider;
    let adminDomain: string; // the bootstrap admin, DOMAIN scope
    let adminRefresh: string;
    let owner: string; // the bootstrap admin, WORKSPACE scope in the new workspace (WORKSPACE_OWNER)
    let workspaceId: string;
    let mine: string; // the project the user is added to
    let theirs: string; // the project the user is not in
    const services: Record<string, { cloud_service_id: string; project_id: string }> = {};
    let member: { access: string; refresh: string };

    const as = (t: string) => (path: string, body: unknown) => call(p.base, path, body, t);
    const ok = async (res: Promise<{ status: number; body: any }>) => {
      const r = await res;
      expect([r.status, r.status === 200 ? 'ok' : r.body]).toEqual([200, 'ok']);
      return r.body;
    };
    const error = (res: { status: number; body: any }) => [res.status, res.body?.error?.code];
    /** A real login at the provider; every token it answers is a secret of the run. */
    const providerLogin = async (o: { jwt?: boolean; client?: string } = {}): Promise<ProviderTokens> => {
      const tokens = await provider.login(USER, o);
      secrets.add(tokens.access_token).add(tokens.id_token);
      return tokens;
    };
    const issueExternal = (credentials: { access_token?: string; id_token?: string }) =>
      call(p.base, '/identity/v2/token/issue', { domain_id: 'domain-local', auth_type: 'EXTERNAL', credentials });
    const grantWorkspace = (refresh: string, workspace_id = workspaceId) =>
      call(p.base, '/identity/v2/token/grant', { grant_type: 'REFRESH_TOKEN', token: refresh, scope: 'WORKSPACE', workspace_id });
    /** token/issue (EXTERNAL) then a WORKSPACE grant for the new workspace: the user's platform tokens. */
    const memberLogin = async (credentials: { access_token?: string; id_token?: string }) => {
      const issued = await ok(issueExternal(credentials));
      const granted = await ok(grantWorkspace(issued.refresh_token));
      expect(granted).toMatchObject({ role_type: 'WORKSPACE_MEMBER', workspace_id: workspaceId });
      for (const t of [issued.access_token, issued.refresh_token, granted.access_token]) secrets.add(t);
      return { access: granted.access_token as string, refresh: issued.refresh_token as string };
    };
    const names = (body: { results: { name: string }[] }) => body.results.map((c) => c.name).sort();

    beforeAll(async () => {
      provider = await startOidcProvider('platform', CLIENT_SECRET, { 'other-app': OTHER_CLIENT_SECRET });
      secrets.add(CLIENT_SECRET).add(OTHER_CLIENT_SECRET);
    });
    afterAll(async () => {
      await provider?.stop();
    });

    it('the bootstrap admin sets the domain\'s external auth to the OpenID provider', async () => {
      const session = await new PlatformClient({ endpoint: p.base, fetch: checkedFetch }).login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password' });
      expect(session).toMatchObject({ scope: 'DOMAIN' });
      adminDomain = session.access_token;
      adminRefresh = session.refresh_token!;
      secrets.add(adminDomain).add(adminRefresh);
      const admin = as(adminDomain);
      const set = await ok(
        admin('/identity/v2/external-auth/set', {
          plugin_info: {
            plugin_id: 'plugin-oidc-identity-auth',
            options: { issuer: provider.issuer, client_id: 'platform', user_id_claim: 'email' },
            secret_data: { client_secret: CLIENT_SECRET },
          },
        }),
      );
      expect(set).toMatchObject({ domain_id: 'domain-local', state: 'ENABLED' });
      const got = await ok(admin('/identity/v2/external-auth/get', {}));
      expect(got.plugin_info.options).toEqual({ issuer: provider.issuer, client_id: 'platform', user_id_claim: 'email' });
      // What a console needs to start the login, from the provider's discovery document; never the secret.
      expect(got.plugin_info.metadata).toMatchObject({ authorization_endpoint: expect.stringMatching(new RegExp(`^${provider.issuer}/`)) });
      expect(JSON.stringify(got)).not.toContain(CLIENT_SECRET);
      // Only a DOMAIN_ADMIN sets it: the workspace owner's token of the first test may not.
      const byOwner = await post('/identity/v2/external-auth/set', { plugin_info: { plugin_id: 'plugin-oidc-identity-auth', options: { issuer: provider.issuer, client_id: 'x' } } });
      expect(error(byOwner)).toEqual([403, 'ERROR_PERMISSION_DENIED']);
    });

    it('creates a workspace, an EXTERNAL user bound as its member, two projects, and puts the user in one', async () => {
      const admin = as(adminDomain);
      const ws = await ok(admin('/identity/v2/workspace/create', { name: 'Team Dana' }));
      workspaceId = ws.workspace_id;
      expect(workspaceId).toMatch(/^workspace-/);
      const user = await ok(admin('/identity/v2/user/create', { user_id: USER, auth_type: 'EXTERNAL', email: USER }));
      expect(user).toMatchObject({ user_id: USER, auth_type: 'EXTERNAL', state: 'ENABLED' });
      const binding = await ok(
        admin('/identity/v2/role-binding/create', { user_id: USER, role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: workspaceId }),
      );
      expect(binding).toMatchObject({ user_id: USER, role_type: 'WORKSPACE_MEMBER', workspace_id: workspaceId });

      // Projects live in a workspace: the admin works there with a WORKSPACE grant (as its owner).
      const grant = await ok(grantWorkspace(adminRefresh));
      expect(grant).toMatchObject({ role_type: 'WORKSPACE_OWNER', workspace_id: workspaceId });
      owner = grant.access_token;
      secrets.add(owner);
      const inWorkspace = as(owner);
      mine = (await ok(inWorkspace('/identity/v2/project/create', { name: 'payments' }))).project_id;
      theirs = (await ok(inWorkspace('/identity/v2/project/create', { name: 'search' }))).project_id;
      const added = await ok(inWorkspace('/identity/v2/project/add-users', { project_id: mine, users: [USER] }));
      expect(added).toMatchObject({ project_id: mine, workspace_id: workspaceId, users: [USER] });
      const projects = await ok(inWorkspace('/identity/v2/project/list', {}));
      expect(projects.results.map((x: { project_id: string }) => x.project_id).sort()).toEqual([mine, theirs].sort());
    });

    it('creates cloud services in inventory in both projects of the new workspace', async () => {
      const inWorkspace = as(owner);
      for (const [name, project_id] of [['pay-api', mine], ['pay-db', mine], ['search-index', theirs]]) {
        const cs = await ok(
          inWorkspace('/inventory/v1/cloud-service/create', {
            cloud_service_type: 'Instance',
            cloud_service_group: 'EC2',
            provider: 'aws',
            name,
            region_code: 'eu-west-1',
            data: { owner: 'team-dana' },
            project_id,
          }),
        );
        expect(cs).toMatchObject({ name, project_id, workspace_id: workspaceId });
        services[name] = cs;
      }
      // The owner sees the three, and none of the bootstrap workspace's.
      const all = await ok(inWorkspace('/inventory/v1/cloud-service/list', {}));
      expect(names(all)).toEqual(['pay-api', 'pay-db', 'search-index']);
    });

    it('the user logs in through the provider and sees exactly the cloud services of their project', async () => {
      // A real authorization-code login; its id_token goes to token/issue with auth_type EXTERNAL.
      const tokens = await providerLogin();
      member = await memberLogin({ id_token: tokens.id_token });
      const asMember = as(member.access);
      const list = await ok(asMember('/inventory/v1/cloud-service/list', {}));
      expect([list.total_count, names(list)]).toEqual([2, ['pay-api', 'pay-db']]);
      expect(list.results.every((c: { project_id: string }) => c.project_id === mine)).toBe(true);
      const own = await ok(asMember('/inventory/v1/cloud-service/get', { cloud_service_id: services['pay-api'].cloud_service_id }));
      expect(own).toMatchObject({ name: 'pay-api', project_id: mine });
      const other = await asMember('/inventory/v1/cloud-service/get', { cloud_service_id: services['search-index'].cloud_service_id });
      expect(error(other)).toEqual([404, 'ERROR_NOT_FOUND']);
      // Asking for the other project by name is refused outright.
      const filtered = await asMember('/inventory/v1/cloud-service/list', { project_id: theirs });
      expect(error(filtered)).toEqual([403, 'ERROR_PERMISSION_DENIED']);
      // The user has no role in the bootstrap workspace: no grant there.
      const elsewhere = await grantWorkspace(member.refresh, 'workspace-local');
      expect(error(elsewhere)).toEqual([403, 'ERROR_PERMISSION_DENIED']);
      // A JWT access token of the provider (aud = the platform's client) logs in as well.
      const jwt = await providerLogin({ jwt: true });
      expect(JSON.parse(Buffer.from(jwt.access_token.split('.')[1], 'base64url').toString())).toMatchObject({ aud: 'platform', email: USER });
      const second = await memberLogin({ access_token: jwt.access_token });
      expect(names(await ok(as(second.access)('/inventory/v1/cloud-service/list', {})))).toEqual(['pay-api', 'pay-db']);
    });

    it('refuses a member who would make themselves WORKSPACE_OWNER (403), and nothing changes', async () => {
      const escalate = await as(member.access)('/identity/v2/role-binding/create', {
        user_id: USER,
        role_id: 'managed-workspace-owner',
        resource_group: 'WORKSPACE',
        workspace_id: workspaceId,
      });
      expect(error(escalate)).toEqual([403, 'ERROR_PERMISSION_DENIED']);
      const bindings = await ok(as(adminDomain)('/identity/v2/role-binding/list', { user_id: USER }));
      expect(bindings.results.map((b: { role_type: string; workspace_id: string }) => [b.role_type, b.workspace_id])).toEqual([['WORKSPACE_MEMBER', workspaceId]]);
    });

    it('refuses a token the provider gave another application (wrong audience): 401', async () => {
      const other = await providerLogin({ client: 'other-app', jwt: true });
      // The same user at the same provider, but addressed to another client: the test's premise, checked.
      const claims = (t: string) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString());
      expect(claims(other.access_token)).toMatchObject({ aud: 'other-app', email: USER, iss: provider.issuer });
      expect(claims(other.id_token)).toMatchObject({ aud: 'other-app', email: USER, iss: provider.issuer });
      for (const credentials of [{ access_token: other.access_token }, { id_token: other.id_token }]) {
        const res = await issueExternal(credentials);
        expect([res.status, res.body.error]).toEqual([401, expect.objectContaining(FAILURE)]);
      }
    });

    it('the admin disables the user: their access token is refused at once and their refresh token cannot grant; enabled again, they log in again', async () => {
      const admin = as(adminDomain);
      const asMember = as(member.access);
      expect((await ok(asMember('/inventory/v1/cloud-service/list', {}))).total_count).toBe(2); // still good right before
      expect(await ok(admin('/identity/v2/user/disable', { user_id: USER }))).toMatchObject({ user_id: USER, state: 'DISABLED' });
      // The very next request, in inventory and in identity: refused, no waiting.
      expect(error(await asMember('/inventory/v1/cloud-service/list', {}))).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      expect(error(await asMember('/inventory/v1/cloud-service/get', { cloud_service_id: services['pay-api'].cloud_service_id }))).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      expect(error(await asMember('/identity/v2/project/list', {}))).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      expect(error(await grantWorkspace(member.refresh))).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      // Nor can they log in through the provider while disabled.
      const whileDisabled = await providerLogin();
      expect(error(await issueExternal({ id_token: whileDisabled.id_token }))).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);

      expect(await ok(admin('/identity/v2/user/enable', { user_id: USER }))).toMatchObject({ user_id: USER, state: 'ENABLED' });
      // Enabling does not bring the old access token back; a new login through the provider gives the same view as before.
      expect(error(await asMember('/inventory/v1/cloud-service/list', {}))).toEqual([401, 'ERROR_AUTHENTICATE_FAILURE']);
      const again = await memberLogin({ id_token: (await providerLogin()).id_token });
      const list = await ok(as(again.access)('/inventory/v1/cloud-service/list', {}));
      expect(names(list)).toEqual(['pay-api', 'pay-db']);
    });
  });

  it('writes no secret into any log: the apps\' request lines, their errors, the gateway\'s access log', async () => {
    // A failed login (the password is in the body) and a token in a query string, for good measure.
    await call(p.base, '/identity/v2/token/issue', { credentials: { user_id: 'admin', password: 'e2e-admin-password-wrong' }, domain_id: 'domain-local' });
    secrets.add('e2e-admin-password-wrong');
    await fetch(`${p.base}/identity/v2/project-group/list?access_token=${token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await new Promise((r) => setTimeout(r, 500)); // nginx and the apps write their lines
    const appLogs = p.logs();
    const access = readFileSync(path.join(p.dir, 'access.log'), 'utf8');
    expect(appLogs).toMatch(/"msg":"request"/); // the request lines are there to be searched
    expect(access).toMatch(/"POST \/monitoring\/v1\/webhook\/[^/ ]+\/\*\*\* HTTP\/1.1"/);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(appLogs.includes(secret) ? `app log holds ${secret.slice(0, 6)}…` : 'clean').toBe('clean');
      expect(access.includes(secret) ? `access log holds ${secret.slice(0, 6)}…` : 'clean').toBe('clean');
    }
  });
});
