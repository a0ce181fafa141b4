// See tools/plugin/upstream-platform.mjs.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PlatformClient } from '@platform/client';
import { startPlatform, waitFor, type Platform } from '@platform/testing';

const HERE = process.env.UPSTREAM_PLUGINS_HOME || '/work/shared/upstream-plugins';
const DIR = process.env.UPSTREAM_PLUGINS_DIR || HERE;
const PYTHON = path.join(DIR, 'venv/bin/python');
const COST_PORT = 51_051;
const WEBHOOK_PORT = 51_052;
const FILES_PORT = 18_766;
const COST_ENDPOINT = `grpc://127.0.0.1:${COST_PORT}`;
const WEBHOOK_ENDPOINT = `grpc://127.0.0.1:${WEBHOOK_PORT}`;
const CSV_URL = `http://127.0.0.1:${FILES_PORT}/cost_example.csv`;
/** The sum of cost_example.csv (five rows of 2023-09, USD). */
const CSV_TOTAL = 2100;

let failures = 0;
function check(what: string, ok: boolean, detail?: unknown): void {
  if (!ok) failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${detail === undefined ? '' : `: ${typeof detail === 'string' ? detail : JSON.stringify(detail).slice(0, 600)}`}`);
}

const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });

/** One upstream server, run as run.sh runs it (upstream's CLI bound to 127.0.0.1), on this walk's own port. */
class Upstream {
  private child?: ChildProcess;
  constructor(
    private readonly label: string,
    private readonly port: number,
    private readonly cwd: string,
    private readonly args: string[],
    private readonly env: Record<string, string> = {},
  ) {}

  async start() {
    if (await listening(this.port)) throw new Error(`port ${this.port} (${this.label}) is taken`);
    this.child = spawn(PYTHON, this.args, { cwd: this.cwd, env: { ...process.env, PYTHONWARNINGS: 'ignore', PYTHONPATH: '.', ...this.env }, stdio: 'ignore' });
    await waitFor(() => listening(this.port), 30_000, this.label, 200);
  }

  async kill() {
    const c = this.child;
    if (!c || c.exitCode !== null) return;
    await new Promise<void>((r) => (c.once('exit', () => r()), c.kill('SIGKILL')));
    await waitFor(async () => !(await listening(this.port)), 10_000, `${this.label} gone`, 100);
  }
}

const plugins = path.join(DIR, 'plugins');
const costPlugin = new Upstream('cost-datasource', COST_PORT, path.join(plugins, 'plugin-http-file-cost-datasource/src'), [path.join(HERE, 'bin/spaceone_loopback.py'), 'run', 'grpc-server', 'cloudforet.cost_analysis'], { SPACEONE_PORT: String(COST_PORT) });
const webhookPlugin = new Upstream('prometheus-webhook', WEBHOOK_PORT, path.join(plugins, 'plugin-prometheus-mon-webhook/src'), [path.join(HERE, 'bin/spaceone_loopback.py'), 'run', 'grpc-server', 'spaceone.monitoring'], { SPACEONE_PORT: String(WEBHOOK_PORT) });
const files = new Upstream('http-examples', FILES_PORT, path.join(plugins, 'plugin-http-file-cost-datasource/examples'), ['-m', 'http.server', String(FILES_PORT), '--bind', '127.0.0.1']);

/** An Alertmanager body (version 4) with one alert per fingerprint given: firing unless named resolved. */
function alertmanager(alerts: { fingerprint: string; resolved?: boolean; name: string }[]) {
  return {
    receiver: 'platform',
    status: 'firing',
    alerts: alerts.map((a) => ({
      status: a.resolved ? 'resolved' : 'firing',
      labels: { alertname: a.name, severity: 'critical', instance: 'node-1:9100' },
      annotations: { summary: `${a.name} on node-1`, description: 'walk' },
      startsAt: '2024-05-01T10:00:00Z',
      endsAt: a.resolved ? '2024-05-01T10:30:00Z' : '0001-01-01T00:00:00Z',
      generatorURL: 'http://prometheus:9090/graph',
      fingerprint: a.fingerprint,
    })),
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    version: '4',
    groupKey: '{}:{}',
    truncatedAlerts: 0,
  };
}

async function main(p: Platform): Promise<void> {
  const post = async (route: string, body: unknown, token?: string) => {
    const res = await fetch(`${p.base}${route}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const login = async (workspaceId?: string) =>
    (await new PlatformClient({ endpoint: p.base }).login({ domainId: 'domain-local', userId: 'admin', password: 'e2e-admin-password', workspaceId })).access_token;
  const domainToken = await login();
  const token = await login('workspace-local');

  // ---- publish the two upstream containers' endpoints
  const published = await post(
    '/plugin/v1/supervisor/publish',
    {
      name: 'upstream-walk',
      hostname: 'walk-host',
      secret_key: 'walk-supervisor-secret',
      plugin_info: [
        { plugin_id: 'plugin-http-file-cost-datasource', version: '1.2.0', state: 'ACTIVE', endpoint: COST_ENDPOINT },
        { plugin_id: 'plugin-prometheus-mon-webhook', version: '1.1.0', state: 'ACTIVE', endpoint: WEBHOOK_ENDPOINT },
      ],
    },
    domainToken,
  );
  check('supervisor/publish', published.status === 200, published.body);
  for (const [id, endpoint] of [['plugin-http-file-cost-datasource', COST_ENDPOINT], ['plugin-prometheus-mon-webhook', WEBHOOK_ENDPOINT]]) {
    const r = await post('/plugin/v1/plugin/get-plugin-endpoint', { plugin_id: id, upgrade_mode: 'AUTO' }, domainToken);
    check(`get-plugin-endpoint ${id}`, r.status === 200 && r.body.endpoint === endpoint, r.body);
  }

  // ---- cost: init metadata, a refusal, sync, sums, re-sync, a plugin restart
  // upstream's platform sends init and verify `options: {}` when none are given, and upstream's plugin
  // takes that; it refuses at get_tasks, which a sync calls before it makes a job
  const noUrl = await post('/cost-analysis/v1/data-source/register', { name: 'no options', resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource' }, schedule: { state: 'DISABLED' } }, token);
  const refused = await post('/cost-analysis/v1/data-source/sync', { data_source_id: noUrl.body?.data_source_id }, token);
  check("the plugin's own refusal (get_tasks without base_url) is a 4xx envelope, never a 500", refused.status >= 400 && refused.status < 500 && typeof refused.body?.error?.code === 'string', { status: refused.status, body: refused.body });
  const ds = await post('/cost-analysis/v1/data-source/register', { name: 'upstream http file', resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: [CSV_URL] } }, schedule: { state: 'DISABLED' } }, token);
  check('data-source/register through the upstream plugin', ds.status === 200, ds.body);
  check("init's metadata is stored and answered (upstream: currency USD, data_source_rules [])", ds.body?.plugin_info?.metadata?.currency === 'USD' && Array.isArray(ds.body?.plugin_info?.metadata?.data_source_rules), ds.body?.plugin_info);
  const dsId = ds.body?.data_source_id as string;

  const sync = async () => {
    const job = await post('/cost-analysis/v1/data-source/sync', { data_source_id: dsId }, token);
    if (job.status !== 200) return { status: `HTTP ${job.status}`, body: job.body };
    return waitFor(async () => {
      const j = await post('/cost-analysis/v1/job/get', { job_id: job.body.job_id }, token);
      return ['SUCCESS', 'FAILURE', 'CANCELED', 'TIMEOUT'].includes(j.body.status) ? j.body : undefined;
    }, 120_000, 'the job', 500);
  };
  const total = async () => {
    const r = await post('/cost-analysis/v1/unified-cost/analyze', { is_confirmed: true, query: { granularity: 'MONTHLY', start: '2023-09', end: '2023-09', fields: { usd: { key: 'cost.USD', operator: 'sum' } } } }, token);
    return r.status === 200 ? Number(r.body.results?.[0]?.usd ?? 0) : NaN;
  };
  const first = await sync();
  check('sync: the job succeeds', first.status === 'SUCCESS', first);
  check("sync: synced_accounts come from the plugin's get_tasks", Array.isArray(first.synced_accounts), first.synced_accounts);
  check(`sync: unified cost 2023-09 sums to ${CSV_TOTAL} USD`, Math.abs((await total()) - CSV_TOTAL) < 1e-6, await total());
  const again = await sync();
  check('re-sync: the job succeeds and the sum is not doubled', again.status === 'SUCCESS' && Math.abs((await total()) - CSV_TOTAL) < 1e-6, await total());
  await costPlugin.kill();
  const down = await sync();
  // upstream's sync calls get_tasks before it makes a job (ERROR_GET_JOB_TASKS): a 503 envelope and no
  // job, or a job that fails with its reason, never a 500
  check('sync while the plugin is down: a 503 envelope or a job in FAILURE with a reason', down.status === 'HTTP 503' || (down.status === 'FAILURE' && Boolean(down.error_code)), down);
  check('and the sums are untouched', Math.abs((await total()) - CSV_TOTAL) < 1e-6, await total());
  await costPlugin.start();
  const back = await sync();
  check('after the plugin restarts, a sync succeeds with the same sum', back.status === 'SUCCESS' && Math.abs((await total()) - CSV_TOTAL) < 1e-6, await total());

  // ---- monitoring: init metadata, events, posts while the plugin is down
  p.admin('project', 'create', '--domain-id', 'domain-local', '--workspace-id', 'workspace-local', '--project-id', 'project-walk', '--name', 'Walk');
  const hook = await post('/monitoring/v1/webhook/create', { name: 'upstream alertmanager', plugin_info: { plugin_id: 'plugin-prometheus-mon-webhook' }, project_id: 'project-walk' }, token);
  check('webhook/create through the upstream plugin', hook.status === 200, hook.body);
  // upstream's prometheus webhook answers init with `metadata: {}`
  check("Webhook.init's metadata is answered", typeof hook.body?.plugin_info?.metadata === 'object' && hook.body?.plugin_info?.metadata !== null, hook.body?.plugin_info);
  const events = async () => {
    const r = await post('/monitoring/v1/event/list', { webhook_id: hook.body.webhook_id }, token);
    return (r.body?.results ?? []) as { event_key: string; event_type: string; title: string }[];
  };
  if (hook.status !== 200) return;
  const postAlerts = (body: unknown) => fetch(hook.body.webhook_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const a = await postAlerts(alertmanager([{ fingerprint: 'walk0000000000a1', name: 'NodeDown' }, { fingerprint: 'walk0000000000a2', name: 'DiskFull' }]));
  check('a post is accepted', a.status < 300, a.status);
  const two = await waitFor(async () => ((await events()).length >= 2 ? events() : undefined), 60_000, 'two events', 500);
  check('Event.parse: two ALERT events, keyed by the fingerprints', two.length === 2 && two.every((e) => e.event_type === 'ALERT'), two.map((e) => [e.event_key, e.event_type, e.title]));
  // A RECOVERY resolves an open alert (a RECOVERY without one is not stored, as upstream).
  await postAlerts(alertmanager([{ fingerprint: 'walk0000000000a2', name: 'DiskFull', resolved: true }]));
  const three = await waitFor(async () => ((await events()).length >= 3 ? events() : undefined), 60_000, 'the recovery', 500);
  check('Event.parse: the resolved alert is a RECOVERY event', three.filter((e) => e.event_type === 'RECOVERY').length === 1, three.map((e) => [e.event_key, e.event_type]));

  await webhookPlugin.kill();
  const whileDown: number[] = [];
  for (let i = 0; i < 5; i++) whileDown.push((await postAlerts(alertmanager([{ fingerprint: `walkdown000000b${i}`, name: `Down${i}` }]))).status);
  check('posts are accepted while the plugin is down', whileDown.every((s) => s < 300), whileDown);
  await new Promise((r) => setTimeout(r, 3000));
  // The built-in would have parsed them already: none is parsed while the published plugin is down.
  check('no post is parsed while the published plugin is down (the built-in did not stand in)', (await events()).length === 3, (await events()).length);
  await webhookPlugin.start();
  const all = await waitFor(async () => ((await events()).length >= 8 ? events() : undefined), 120_000, 'eight events', 1000);
  await new Promise((r) => setTimeout(r, 5000));
  const settled = await events();
  const alerts = settled.filter((e) => e.event_type === 'ALERT');
  check('after the plugin is back: every post parsed once, nothing lost, nothing doubled', settled.length === 8 && new Set(alerts.map((e) => e.event_key)).size === alerts.length, { events: all.length, settled: settled.length });
}

async function run() {
  if (!existsSync(PYTHON)) throw new Error(`no venv at ${PYTHON}: run ${HERE}/run.sh setup with UPSTREAM_PLUGINS_DIR=${DIR}`);
  await files.start();
  await costPlugin.start();
  await webhookPlugin.start();
  const p = await startPlatform({ portOffset: 30_000, gatewayPort: 38_080, redisUrl: 'redis://127.0.0.1:6379/11', env: { OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1', LOG_LEVEL: 'info' }, label: 'upstream-walk' });
  try {
    await main(p);
    for (const secret of ['walk-supervisor-secret', 'e2e-admin-password']) check(`no log line holds ${secret.slice(0, 4)}…`, !p.logs().includes(secret));
  } finally {
    const log = path.join(tmpdir(), 'upstream-walk-platform.log');
    writeFileSync(log, p.logs());
    console.log(`platform log: ${log}`);
    await p.stop();
    await Promise.all([costPlugin.kill(), webhookPlugin.kill(), files.kill()]);
  }
  console.log(failures ? `\n${failures} check(s) failed` : '\nevery check passed');
  process.exit(failures ? 1 : 0);
}

run().catch((err: Error) => {
  console.error(err.stack ?? err.message);
  Promise.all([costPlugin.kill(), webhookPlugin.kill(), files.kill()]).finally(() => process.exit(2));
});
