import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { mintToken, testKeys, waitFor } from '@platform/testing';
import { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from './dependencies';
import { ROOT, startApps, type Supervised } from './processes';

/**
 * A cost data source served by a published TypeScript plugin (libs/plugin-kit, its own process), with
 * the plugin module and cost-analysis as production runs them: the plugin process is SIGKILLed while
 * it streams a task's rows. The job and its task end in FAILURE with the reason after the retries, no
 * row of the task is left, the worker never dies; once the plugin is back on its endpoint, a re-sync
 * gives the exact sums.
 */
const ROWS = 20_000;
// cost of row i is (i % 100) / 4
const EXPECTED = Array.from({ length: ROWS }, (_, i) => (i % 100) / 4).reduce((a, b) => a + b, 0);

describe('cost plugin killed mid-stream', () => {
  let dir: string;
  let pgc: PrivatePostgres;
  let redis: PrivateRedis;
  let sup: Supervised;
  let cost: string;
  let pluginApp: string;
  let admin: string;
  let costDb: pg.Pool;
  let plugin: ChildProcess | undefined;
  let pluginPort: number;
  const bundled = path.join(ROOT, 'tmp/chaos-cost-plugin/plugin.cjs');

  const startPlugin = async () => {
    const child = spawn(process.execPath, [bundled], { env: { ...process.env, PORT: String(pluginPort), PLUGIN_ROWS: String(ROWS), PLUGIN_PAGE_DELAY_MS: '50' }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
      child.once('exit', (c) => reject(new Error(`the plugin exited (${c})`)));
    });
    plugin = child;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'chaos-cost-plugin-'));
    // bundled as the apps are (tools/build/bundle.mjs), to run as a plain node process
    const script = `import { bundle } from ${JSON.stringify(path.join(ROOT, 'tools/build/bundle.mjs'))}; await bundle({ entryPoints: [${JSON.stringify(path.join(__dirname, 'cost-plugin-process.ts'))}], outfile: ${JSON.stringify(bundled)} });`;
    const built = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`bundling the plugin failed: ${built.stderr}`);
    [pgc, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()]);
    const apps = await startApps({
      apps: ['plugin', 'cost-analysis'],
      pg: pgc,
      redisUrl: redis.url,
      dir,
      logFile: path.join(dir, 'processes.log'),
      env: { JWT_PUBLIC_KEY: testKeys.publicPem, WORKER_LOCK_DURATION_MS: '5000', WORKER_STALLED_INTERVAL_MS: '2000', WORKER_ATTEMPTS: '3' },
      appEnv: { 'cost-analysis': { PLUGIN_STREAM_IDLE_MS: '5000' } },
    });
    sup = apps.sup;
    cost = apps.url['cost-analysis'];
    pluginApp = apps.url.plugin;
    costDb = new pg.Pool({ connectionString: apps.dbUrl['cost-analysis'], max: 2 });
    admin = await mintToken({ domainId: 'domain-a', roleType: 'DOMAIN_ADMIN', ttlSeconds: 3600 });
    pluginPort = await freePort();
    await startPlugin();
  }, 300_000);

  afterAll(async () => {
    plugin?.kill('SIGKILL');
    await costDb?.end();
    await sup?.stop();
    await pgc?.destroy();
    await redis?.destroy();
    if (dir && !process.env.CHAOS_KEEP) rmSync(dir, { recursive: true, force: true });
  });

  const post = async (base: string, p: string, body: unknown) => {
    const res = await fetch(`${base}/${p}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const json = JSON.parse(await res.text());
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const api = (p: string, body: unknown) => post(`${cost}/cost-analysis/v1`, p, body);
  const ended = (jobId: string) =>
    waitFor(async () => {
      const j = await api('job/get', { job_id: jobId });
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 120_000, `job ${jobId} to end`, 200);

  it('the job fails with the reason, nothing is left, the worker stays up; a re-sync after the restart gives the exact sums', async () => {
    await post(`${pluginApp}/plugin/v1`, 'supervisor/publish', {
      name: 'chaos',
      hostname: 'chaos-host',
      secret_key: 'chaos-supervisor-key',
      plugin_info: [{ plugin_id: 'plugin-chaos-cost', version: '1.0.0', state: 'ACTIVE', endpoint: `grpc://127.0.0.1:${pluginPort}` }],
    });
    const ds = await api('data-source/register', { name: 'chaos', resource_group: 'DOMAIN', plugin_info: { plugin_id: 'plugin-chaos-cost', options: {} } });
    expect(ds.plugin_info).toMatchObject({ version: '1.0.0', metadata: { currency: 'USD' } });
    const workerPids = sup.pids('cost-analysis worker').length;

    const job = await api('data-source/sync', { data_source_id: ds.data_source_id });
    // mid-stream: the task has reported rows, and the stream (2 s at least) is not over
    await waitFor(async () => (await api('job-task/list', { job_id: job.job_id })).results[0]?.created_count > 0, 30_000, 'rows under way', 50);
    plugin!.kill('SIGKILL');
    const failed = await ended(job.job_id);
    expect([failed.status, failed.error_code]).toEqual(['FAILURE', 'ERROR_JOB_TASK']);
    const [task] = (await api('job-task/list', { job_id: job.job_id })).results;
    expect(task).toMatchObject({ status: 'FAILURE', error_code: 'ERROR_PLUGIN_UNAVAILABLE' });
    expect((await costDb.query(`SELECT count(*)::int AS n FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.data_source_id = $1`, [ds.data_source_id])).rows[0].n).toBe(0);
    expect(sup.pids('cost-analysis worker').length).toBe(workerPids);
    expect(sup.exits('cost-analysis worker')).toEqual([]);

    await startPlugin();
    const again = await ended((await api('data-source/sync', { data_source_id: ds.data_source_id })).job_id);
    expect(again.status).toBe('SUCCESS');
    const { rows } = await costDb.query(`SELECT count(*)::int AS n, sum(c.cost)::float8 AS cost FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.data_source_id = $1`, [ds.data_source_id]);
    expect(rows[0].n).toBe(ROWS);
    expect(Math.abs(rows[0].cost - EXPECTED)).toBeLessThan(1e-6 * EXPECTED);
    const unified = await api('unified-cost/list', { query: { page: { limit: 1000 } } });
    const total = unified.results.reduce((s: number, u: { cost: { USD: number } }) => s + u.cost.USD, 0);
    expect(Math.abs(total - EXPECTED)).toBeLessThan(1e-6 * EXPECTED);
  }, 240_000);
});
