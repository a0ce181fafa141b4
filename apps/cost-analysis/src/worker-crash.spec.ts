import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import request from 'supertest';
import { bearer, waitFor, createTempDatabase, type TempDatabase } from '@platform/testing';
import { createTestCostAnalysis, serveFiles } from './test-support';

/**
 * The real worker (src/worker.ts, bundled as for production) is SIGKILLed while a task streams a file:
 * the task's uncommitted rows vanish with its transaction, the stalled BullMQ job is picked up by another
 * worker, and every cost is counted exactly once.
 */
const ROOT = path.resolve(__dirname, '../../..');

function csv(rows: number, month: number, from = 0) {
  const lines = [];
  for (let i = from; i < from + rows; i++) lines.push(`${(i % 97) + 0.5},USD,aws,p${i % 3},2024,${month},${1 + (i % 28)}`);
  return lines.join('\n') + '\n';
}
const HEADER = 'cost,currency,provider,product,year,month,day\n';
const total = (rows: number, from = 0) => {
  let s = 0;
  for (let i = from; i < from + rows; i++) s += (i % 97) + 0.5;
  return s;
};

describe('worker crash', () => {
  let t: Awaited<ReturnType<typeof createTestCostAnalysis>>;
  let pluginDb: TempDatabase;
  let files: Awaited<ReturnType<typeof serveFiles>>;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    t = await createTestCostAnalysis();
    pluginDb = await createTempDatabase({ app: 'plugin' });
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    await files?.close();
    await t?.close();
    await pluginDb?.drop();
  });

  it('a worker killed mid-task loses nothing and counts nothing twice', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cost-worker-'));
    const outfile = path.join(dir, 'worker.js');
    buildSync({
      entryPoints: [path.join(__dirname, 'worker.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      outfile,
      packages: 'external',
      tsconfig: path.join(ROOT, 'tsconfig.base.json'),
      nodePaths: [path.join(ROOT, 'node_modules')],
      logLevel: 'error',
    });

    // January is served at once; February's first half is sent, then the response hangs until the kill.
    let crashed = false;
    let requests = 0;
    files = await serveFiles({
      '/jan.csv': HEADER + csv(20_000, 1),
      '/feb.csv': (res) => {
        requests++;
        if (crashed) return res.end(HEADER + csv(30_000, 2));
        res.write(HEADER + csv(15_000, 2));
      },
    });
    const owner = await bearer({ domainId: 'd1', workspaceId: 'ws-1', roleType: 'WORKSPACE_OWNER' });
    const call = (p: string, body: object) => request(t.app).post(`/cost-analysis/v1/${p}`).set('Authorization', owner).send(body);
    const ds = (await call('data-source/register', {
      name: 'crash',
      resource_group: 'WORKSPACE',
      plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: [files.url('/jan.csv'), files.url('/feb.csv')] } },
    })).body;

    child = spawn(process.execPath, [outfile], {
      env: {
        ...process.env,
        DATABASE_URL: t.config.databaseUrl,
        // the plugin module's table, where published plugins are resolved (empty: the built-ins serve)
        PLUGIN_DATABASE_URL: pluginDb.url,
        REDIS_URL: t.config.redisUrl,
        QUEUE_PREFIX: t.config.queuePrefix,
        DIRECTORY_PREFIX: t.config.directoryPrefix,
        OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1',
        WORKER_CONCURRENCY: '1',
        WORKER_LOCK_DURATION_MS: '1500',
        WORKER_STALLED_INTERVAL_MS: '1000',
        LOG_LEVEL: 'silent',
        NODE_PATH: path.join(ROOT, 'node_modules'),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const job = (await call('data-source/sync', { data_source_id: ds.data_source_id })).body;
    expect(job.total_tasks).toBe(2);

    // January committed, February's task streaming: kill the worker there.
    // Both tasks are created in one transaction: tell them apart by their file.
    const tasks = async () => {
      const list = (await call('job-task/list', { job_id: job.job_id })).body.results as { options: { base_url: string } }[];
      return ['/jan.csv', '/feb.csv'].map((f) => list.find((x) => x.options.base_url.endsWith(f))) as any[];  
    };
    await waitFor(async () => {
      const [jan, feb] = await tasks();
      return jan.status === 'SUCCESS' && feb.status === 'IN_PROGRESS' && requests === 1;
    }, 30_000);
    // The kill lands mid-COPY: PostgreSQL is inside the task's `COPY cost FROM STDIN`, February's first
    // 15,000 rows received and not committed. (The view is cluster-wide and every test database is a
    // clone of one template, so `cost` has the same oid in each: filter on this database.)
    const copying = async () =>
      (await t.db.pool.query(`SELECT tuples_processed::int AS n FROM pg_stat_progress_copy WHERE datname = current_database() AND relid = 'cost'::regclass`)).rows.map((r) => r.n);
    await waitFor(async () => (await copying())[0] === 15_000, 30_000, 'the COPY to hold 15,000 rows');
    crashed = true;
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;
    await waitFor(async () => (await copying()).length === 0, 30_000, 'the COPY to end with its session');
    const mid = await t.db.pool.query(`SELECT billed_month, count(*)::int AS n FROM cost GROUP BY 1 ORDER BY 1`);
    expect(mid.rows).toEqual([{ billed_month: '2024-01', n: 20_000 }]);

    // Another worker takes the stalled task over once its lock lapses and finishes the job.
    t.startWorker();
    const done = await waitFor(async () => {
      const j = (await call('job/get', { job_id: job.job_id })).body;
      return j.status !== 'IN_PROGRESS' ? j : undefined;
    }, 30_000);
    expect(done.status).toBe('SUCCESS');
    expect(requests).toBe(2);
    const [jan, feb] = await tasks();
    expect([jan.status, jan.created_count, feb.status, feb.created_count]).toEqual(['SUCCESS', 20_000, 'SUCCESS', 30_000]);

    const after = await t.db.pool.query(`SELECT billed_month, count(*)::int AS n, sum(cost) AS s FROM cost GROUP BY 1 ORDER BY 1`);
    expect(after.rows.map((r) => [r.billed_month, r.n])).toEqual([['2024-01', 20_000], ['2024-02', 30_000]]);
    const unified = (await call('unified-cost/analyze', {
      query: { granularity: 'MONTHLY', start: '2024-01', end: '2024-02', fields: { usd: { key: 'cost.USD', operator: 'sum' } }, sort: [{ key: 'date' }] },
      is_confirmed: true,
    })).body.results;
    expect(unified.map((r: { date: string }) => r.date)).toEqual(['2024-01', '2024-02']);
    expect(unified[0].usd).toBeCloseTo(total(20_000), 6);
    expect(unified[1].usd).toBeCloseTo(total(30_000), 6);
  }, 90_000);
});
