import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PlatformApiError, PlatformClient } from '@platform/client';
import { undocumentedAnswers } from '@platform/http';
import { waitFor } from '@platform/testing';
import { call, startPlatform, type Platform } from './platform';

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
};

describe('the platform end to end, through nginx', () => {
  let p: Platform;
  let token: string; // workspace owner of the bootstrap workspace
  let domainToken: string;
  /** Every secret the run handles: none may appear in any process's log or the gateway's access log. */
  const secrets = new Set<string>(['e2e-admin-password', 'e2e-ingest-token']);

  beforeAll(async () => {
    // LOG_LEVEL=info: one line per request in every app, so the test of secrets sees what production logs.
    p = await startPlatform({ OPSFLOW_INGEST_TOKENS: 'e2e-ingest-token', ALLOW_PRIVATE_URLS: 'true', LOG_LEVEL: 'info' });
  });
  afterAll(async () => {
    await p?.stop();
  });
  const post = (path: string, body: unknown, t = token) => call(p.base, path, body, t);

  /** The typed client (libs/client), logged in as the bootstrap admin in the first test. */
  let api: PlatformClient;

  it('gets a token as the bootstrap admin and grants workspace and domain scopes', async () => {
    api = new PlatformClient({ endpoint: p.base });
    const ws = await api.login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password', workspaceId: 'workspace-local' });
    expect(ws).toMatchObject({ scope: 'WORKSPACE', workspace_id: 'workspace-local' });
    token = ws.access_token;
    const domain = await new PlatformClient({ endpoint: p.base }).login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password' });
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
    };
    expect(p.apps.length).toBeGreaterThanOrEqual(6);
    for (const app of p.apps) {
      const [path, body] = lists[app];
      const t = app === 'statistics' ? domainToken : token;
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
