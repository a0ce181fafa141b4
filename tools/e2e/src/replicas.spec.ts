import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Client } from 'pg';
import { startPlatform, totpNow, waitFor, type Platform } from '@platform/testing';
import { call } from './platform';

/**
 * Three replicas of every app and every worker behind nginx (as `START_REPLICAS=3 npm start` runs them):
 * what must hold when a request, its follow-up and the work it queues land on different processes. Each
 * test calls the replicas directly (`urlOf(app, i)`) where it matters which one answers.
 */
const REPLICAS = 3;
const PASSWORD = 'e2e-admin-password';
const fixtures = path.resolve(__dirname, '../fixtures');

describe(`the platform with ${REPLICAS} replicas of every app and worker`, () => {
  let p: Platform;
  let owner: string; // workspace owner of workspace-local (the bootstrap admin)
  let domain: string;
  const at = (app: string, i: number) => (route: string, body: unknown, token?: string) => call(p.urlOf(app, i), route, body, token);
  const each = <T>(fn: (i: number) => Promise<T>) => Promise.all([...Array(REPLICAS).keys()].map(fn));
  const issue = (i: number, userId: string, password: string, extra: object = {}) =>
    at('identity', i)('/identity/v2/token/issue', { domain_id: 'domain-local', credentials: { user_id: userId, password }, ...extra });
  const grant = (i: number, refresh: string, workspace?: string) =>
    at('identity', i)('/identity/v2/token/grant', { grant_type: 'REFRESH_TOKEN', token: refresh, scope: workspace ? 'WORKSPACE' : 'DOMAIN', ...(workspace && { workspace_id: workspace }) });

  beforeAll(async () => {
    p = await startPlatform({
      portOffset: Number(process.env.E2E_REPLICAS_PORT_OFFSET || 24_000),
      gatewayPort: Number(process.env.E2E_REPLICAS_GATEWAY_PORT || 28_090),
      redisUrl: process.env.E2E_REPLICAS_REDIS_URL || 'redis://127.0.0.1:6379/12',
      replicas: REPLICAS,
      label: 'replicas',
      env: {
        OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1',
        LOGIN_MAX_FAILURES: '3',
        TOKEN_ISSUE_RATE_USER_POINTS: '6',
        TOKEN_ISSUE_RATE_ADDRESS_POINTS: '1000',
      },
    });
    const refresh = (await issue(0, 'admin', PASSWORD)).body.refresh_token;
    owner = (await grant(1, refresh, 'workspace-local')).body.access_token;
    domain = (await grant(2, refresh)).body.access_token;
  }, 240_000);
  afterAll(async () => {
    await p?.stop();
  }, 60_000);

  it('runs every process: three of each app and worker, all ready, nginx balancing over them', async () => {
    expect(p.processes.filter((x) => x.kind === 'api')).toHaveLength(REPLICAS * p.apps.length);
    expect(p.processes.filter((x) => x.kind === 'worker').length).toBe(REPLICAS * 2);
    for (const app of p.apps) {
      const ready = await each((i) => fetch(`${p.urlOf(app, i)}/readyz`).then((r) => r.status));
      expect([app, ready]).toEqual([app, [200, 200, 200]]);
    }
    // Through the gateway, nginx spreads the requests over every identity replica.
    for (let i = 0; i < REPLICAS * 2; i++) expect((await call(p.base, '/identity/v1/endpoint/list', {}, domain)).status).toBe(200);
    await waitFor(() => {
      const ports = new Set([...readFileSync(path.join(p.dir, 'access.log'), 'utf8').matchAll(/\/identity\/v1\/endpoint\/list.*upstream=127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1])));
      return ports.size === REPLICAS;
    }, 5000, 'every identity replica behind nginx');
  });

  it('a project membership change and a role change reach every replica of every module on its next request', async () => {
    // Users, bindings and projects made through different identity replicas.
    expect((await at('identity', 0)('/identity/v2/user/create', { user_id: 'rep-member', password: 'rep-password-1' }, domain)).status).toBe(200);
    const binding = await at('identity', 1)(
      '/identity/v2/role-binding/create',
      { user_id: 'rep-member', role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: 'workspace-local' },
      domain,
    );
    expect(binding.status).toBe(200);
    const mine = (await at('identity', 2)('/identity/v2/project/create', { name: 'rep-mine' }, owner)).body.project_id;
    const other = (await at('identity', 0)('/identity/v2/project/create', { name: 'rep-other' }, owner)).body.project_id;
    expect((await at('identity', 1)('/identity/v2/project/add-users', { project_id: mine, users: ['rep-member'] }, owner)).status).toBe(200);
    for (const [i, project] of [mine, mine, other].entries()) {
      const res = await at('inventory', i)('/inventory/v1/cloud-service/create', { name: `rep-vm-${i}`, provider: 'aws', cloud_service_group: 'EC2', cloud_service_type: 'Instance', data: { n: i }, project_id: project }, owner);
      expect([res.status, res.body.error?.message]).toEqual([200, undefined]);
    }
    const memberToken = (await grant(2, (await issue(1, 'rep-member', 'rep-password-1')).body.refresh_token, 'workspace-local')).body.access_token;
    const seen = () => each(async (i) => (await at('inventory', i)('/inventory/v1/cloud-service/list', {}, memberToken)).body.total_count);
    expect(await seen()).toEqual([2, 2, 2]);
    expect((await at('identity', 0)('/identity/v2/project/remove-users', { project_id: mine, users: ['rep-member'] }, owner)).status).toBe(200);
    expect(await seen()).toEqual([0, 0, 0]);

    // The role changes through one identity replica: the member's token stops in every replica of every module.
    expect((await at('identity', 2)('/identity/v2/role-binding/update-role', { role_binding_id: binding.body.role_binding_id, role_id: 'managed-workspace-owner' }, domain)).status).toBe(200);
    for (const app of ['identity', 'inventory', 'monitoring', 'cost-analysis', 'statistics', 'repository', 'opsflow', 'plugin']) {
      const route = { identity: '/identity/v2/project/list', inventory: '/inventory/v1/cloud-service/list', monitoring: '/monitoring/v1/event/list', 'cost-analysis': '/cost-analysis/v1/job/list', statistics: '/statistics/v1/storage/list', repository: '/repository/v2/schema/list', opsflow: '/opsflow/v1/event/list', plugin: '/plugin/v1/supervisor/list' }[app]!;
      const statuses = await each(async (i) => (await at(app, i)(route, {}, memberToken)).status);
      expect([app, statuses]).toEqual([app, [401, 401, 401]]);
    }
    const regranted = await grant(0, (await issue(2, 'rep-member', 'rep-password-1')).body.refresh_token, 'workspace-local');
    expect(regranted.body.role_type).toBe('WORKSPACE_OWNER');
  });

  it('counts login failures and rate limits across replicas, and keeps the MFA step in Redis', async () => {
    expect((await at('identity', 0)('/identity/v2/user/create', { user_id: 'rep-locked', password: 'rep-password-1' }, domain)).status).toBe(200);
    // LOGIN_MAX_FAILURES=3, one failure on each replica: the right password is then refused on any of them.
    for (let i = 0; i < 3; i++) expect((await issue(i, 'rep-locked', 'wrong-password')).body.error.code).toBe('ERROR_AUTHENTICATE_FAILURE');
    expect((await issue(1, 'rep-locked', 'rep-password-1')).body.error.code).toBe('ERROR_LOGIN_BLOCKED');

    // TOKEN_ISSUE_RATE_USER_POINTS=6 per user, whichever replica answers.
    expect((await at('identity', 0)('/identity/v2/user/create', { user_id: 'rep-rated', password: 'rep-password-1' }, domain)).status).toBe(200);
    for (let n = 0; n < 6; n++) expect((await issue(n % 3, 'rep-rated', 'rep-password-1')).status).toBe(200);
    const limited = await issue(2, 'rep-rated', 'rep-password-1');
    expect([limited.status, limited.body.error.code]).toEqual([429, 'ERROR_TOO_MANY_REQUESTS']);

    // MFA: the password on one replica, the code on another.
    expect((await at('identity', 0)('/identity/v2/user/create', { user_id: 'rep-mfa', password: 'rep-password-1' }, domain)).status).toBe(200);
    const { secret } = p.admin('user', 'mfa-enable', '--domain-id', 'domain-local', '--user-id', 'rep-mfa') as { secret: string };
    expect((await issue(0, 'rep-mfa', 'rep-password-1')).body.error.code).toBe('ERROR_MFA_REQUIRED');
    const second = await at('identity', 1)('/identity/v2/token/issue', {
      domain_id: 'domain-local',
      auth_type: 'MFA',
      credentials: { user_id: 'rep-mfa' },
      verify_code: totpNow(secret),
    });
    expect(second.status).toBe(200);
  });

  it('downloads through one replica an export requested through another', async () => {
    const exp = await at('inventory', 0)(
      '/inventory/v1/cloud-service/export',
      { file_format: 'CSV', file_name: 'rep', options: [{ name: 'VMs', query_type: 'SEARCH', search_query: { fields: ['name'], sort: [{ key: 'name' }] } }] },
      owner,
    );
    expect([exp.status, exp.body.error?.message]).toEqual([200, undefined]);
    const { pathname } = new URL(exp.body.download_url);
    const files = await each(async (i) => {
      const res = await fetch(`${p.urlOf('inventory', i)}${pathname}`);
      return `${res.status} ${(await res.text()).trim().split(/\r?\n/)[0]}`;
    });
    expect(files).toEqual(['200 name', '200 name', '200 name']);
  });

  it('stores each webhook delivery once, whichever replica accepted it and whichever worker ran it', async () => {
    const project = (await at('identity', 1)('/identity/v2/project/create', { name: 'rep-alerts' }, owner)).body.project_id;
    const hook = await at('monitoring', 0)('/monitoring/v1/webhook/create', { name: 'rep-alerts', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: project }, owner);
    expect([hook.status, hook.body.error?.message]).toEqual([200, undefined]);
    const { pathname } = new URL(hook.body.webhook_url);
    const template = JSON.parse(readFileSync(path.join(fixtures, 'alertmanager.json'), 'utf8'));
    const N = 30;
    const posts = await Promise.all(
      [...Array(N).keys()].map((n) => {
        const body = structuredClone(template);
        for (const a of body.alerts ?? []) {
          a.labels = { ...a.labels, instance: `host-${n}` };
          a.fingerprint = `fp-${n}-${a.fingerprint ?? ''}`;
        }
        return fetch(`${p.urlOf('monitoring', n % REPLICAS)}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.status);
      }),
    );
    expect(posts.every((s) => s === 200)).toBe(true);
    const db = new Client({ connectionString: p.dbUrl('monitoring') });
    db.on('error', () => {});
    await db.connect();
    try {
      const count = async () => Number((await db.query('SELECT count(*)::int AS n FROM webhook_delivery WHERE webhook_id = $1', [hook.body.webhook_id])).rows[0].n);
      await waitFor(async () => (await count()) === N, 30_000, 'every delivery stored');
      // Workers on three processes: still one row per delivery, and the counters count each once.
      await new Promise((r) => setTimeout(r, 500));
      expect(await count()).toBe(N);
      const got = await at('monitoring', 1)('/monitoring/v1/webhook/get', { webhook_id: hook.body.webhook_id }, owner);
      expect(got.body.requests.total).toBe(N);
    } finally {
      await db.end();
    }
  });

  it('runs a scheduled cost sync once for its slot, with a tick on every worker replica at once', async () => {
    const csv = readFileSync(path.join(fixtures, 'costs.csv'));
    const files = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/csv' }).end(csv));
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    const db = new Client({ connectionString: p.dbUrl('cost-analysis') });
    db.on('error', () => {});
    await db.connect();
    const queue = new Queue('cost-analysis-schedule', { connection: { url: p.env.REDIS_URL }, prefix: 'bull' });
    try {
      const ds = await at('cost-analysis', 0)(
        '/cost-analysis/v1/data-source/register',
        {
          name: 'rep-billing',
          resource_group: 'WORKSPACE',
          plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: `http://127.0.0.1:${(files.address() as AddressInfo).port}/costs.csv` } },
          schedule: { state: 'ENABLED', hours: [0] },
        },
        owner,
      );
      expect(ds.status).toBe(200);
      // The slot has come (an hour ago), and every worker replica ticks at once, twice.
      await db.query(`UPDATE data_source SET next_sync_at = date_trunc('hour', now()) - interval '1 hour' WHERE data_source_id = $1`, [ds.body.data_source_id]);
      await queue.addBulk([...Array(REPLICAS * 2).keys()].map((n) => ({ name: 'tick', data: {}, opts: { jobId: `rep-tick-${n}` } })));
      const jobs = async () => (await db.query('SELECT job_id, scheduled_at FROM job WHERE data_source_id = $1', [ds.body.data_source_id])).rows;
      await waitFor(
        async () => {
          const c = await queue.getJobCounts('wait', 'active');
          return c.wait + c.active === 0 && (await jobs()).length > 0;
        },
        30_000,
        'the ticks',
      );
      const made = await jobs();
      expect(made).toHaveLength(1);
      expect(made[0].scheduled_at).toBeInstanceOf(Date);
      const next = (await db.query('SELECT next_sync_at FROM data_source WHERE data_source_id = $1', [ds.body.data_source_id])).rows[0].next_sync_at as Date;
      expect(next.getTime()).toBeGreaterThan(Date.now());
    } finally {
      await queue.close();
      await db.end();
      await new Promise((r) => files.close(r));
    }
  });
});
