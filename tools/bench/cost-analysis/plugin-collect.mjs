#!/usr/bin/env node
// A cost collection through a published gRPC plugin against the built-in http-file plugin, through the
// built app and worker (dist/apps/cost-analysis): the same COST_BENCH_ROWS rows (12 months, USD), served
// once as a CSV file to the built-in and once by a TypeScript plugin written with libs/plugin-kit in its
// own process (as a plugin container is), pages of COST_BENCH_PAGE rows a CostsInfo message. Each run
// syncs both data sources one after the other (the order alternates between runs), from sync to job
// SUCCESS (fetch or stream, validate, COPY into cost, unified rebuild). Target: the plugin ≥ 0.7× the
// built-in's rows/s (the median of the paired ratios).
//   node tools/build/build-app.mjs cost-analysis && node tools/bench/cost-analysis/plugin-collect.mjs
//   COST_BENCH_ROWS (200000), COST_BENCH_PAGE (1000), BENCH_RUNS (3). Loopback and the local PostgreSQL only.
import { fork, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { bundle } from '../../build/bundle.mjs';
import { record } from '../lib/report.mjs';
import { freshDatabase, root, signingKeys, waitReady } from '../lib/setup.mjs';

const ROWS = Number(process.env.COST_BENCH_ROWS || 200_000);
const PAGE = Number(process.env.COST_BENCH_PAGE || 1000);
const RUNS = Number(process.env.BENCH_RUNS || 3);
const TIMEOUT_MS = 20 * 60_000;
const here = path.dirname(fileURLToPath(import.meta.url));
const entry = path.join(root, 'tmp/bench-cost-plugin/plugin.cjs');
const PROVIDERS = ['aws', 'google_cloud', 'azure'];
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-northeast-2'];

/** Row i, the same for both plugins. */
function row(i) {
  const h = (k) => Math.imul(i + 1, k) >>> 7;
  const m = (i % 12) + 1;
  const d = 1 + (h(0xfd7046c5) % 28);
  return {
    cost: ((i * 7919) % 100_000) / 100,
    usage_quantity: i % 1000,
    provider: PROVIDERS[h(0x85ebca6b) % 3],
    region_code: REGIONS[h(0xc2b2ae35) % 4],
    product: `product-${h(0x27d4eb2f) % 20}`,
    usage_type: `type-${h(0xd3a2646c) % 5}`,
    usage_unit: 'Hrs',
    billed_date: `2024-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`,
  };
}

if (process.argv[2] === 'serve') {
  // the plugin's process
  const { serveCostDataSource } = createRequire(import.meta.url)(entry);
  const server = await serveCostDataSource({
    init: () => ({ metadata: { currency: 'USD' } }),
    getTasks: () => ({ tasks: [{ task_options: { rows: ROWS } }] }),
    getData: function* (req) {
      const rows = Number(req.task_options.rows);
      for (let start = 0; start < rows; start += PAGE) {
        const results = [];
        for (let i = start; i < Math.min(rows, start + PAGE); i++) results.push(row(i));
        yield { results };
      }
    },
  });
  process.send({ endpoint: server.endpoint });
  process.on('message', async () => {
    await server.stop(1000);
    process.exit(0);
  });
} else {
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  const children = [];
  process.on('exit', () => children.forEach((c) => c.kill('SIGTERM')));

  // the CSV of the same rows, for the built-in
  const dir = path.join(root, 'tmp/bench-cost-plugin');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `costs-${ROWS}.csv`);
  if (!existsSync(file)) {
    const out = createWriteStream(file);
    out.write('cost,currency,usage_quantity,provider,region_code,product,usage_type,usage_unit,billed_date\n');
    let buf = '';
    for (let i = 0; i < ROWS; i++) {
      const r = row(i);
      buf += `${r.cost},USD,${r.usage_quantity},${r.provider},${r.region_code},${r.product},${r.usage_type},${r.usage_unit},${r.billed_date}\n`;
      if (buf.length > 1 << 20) {
        if (!out.write(buf)) await once(out, 'drain');
        buf = '';
      }
    }
    out.end(buf);
    await once(out, 'finish');
  }
  const files = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/csv');
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => files.listen(0, '127.0.0.1', r));
  const fileUrl = `http://127.0.0.1:${files.address().port}/costs.csv`;

  // the plugin, in its own process
  await bundle({ entryPoints: [path.join(here, 'plugin-entry.ts')], outfile: entry });
  const plugin = fork(fileURLToPath(import.meta.url), ['serve'], { stdio: 'inherit' });
  children.push(plugin);
  const { endpoint } = await new Promise((resolve) => plugin.once('message', resolve));

  // the databases (cost-analysis's and the plugin module's), the plugin published, the app and worker
  const dbUrl = await freshDatabase('cost-analysis', process.env.COST_BENCH_DB || 'bench_cost_plugin');
  const pluginDbUrl = await freshDatabase('plugin', process.env.COST_BENCH_PLUGIN_DB || 'bench_cost_plugin_registry');
  const pool = new pg.Pool({ connectionString: dbUrl, max: 2 });
  const pluginPool = new pg.Pool({ connectionString: pluginDbUrl, max: 1 });
  await pluginPool.query(`INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ('d1', 'sup-bench', 'bench', 'bench', '')`);
  await pluginPool.query(
    `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint, plugin_key)
     VALUES ('sup-bench', 'd1', 'bench', 'bench', 'plugin-bench-cost', '1.0.0', 'ACTIVE', $1, 'sup-bench plugin-bench-cost 1.0.0')`,
    [endpoint],
  );
  const keys = signingKeys();
  const owner = await keys.token();
  const port = Number(process.env.COST_BENCH_PORT || 18112);
  const prefix = `bench:cost-plugin:${process.pid}:`;
  const env = {
    ...process.env, DATABASE_URL: dbUrl, PLUGIN_DATABASE_URL: pluginDbUrl, REDIS_URL: process.env.REDIS_URL || 'redis://127.0.0.1:6379',
    QUEUE_PREFIX: `${prefix}bull`, DIRECTORY_PREFIX: prefix, OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1', JOB_TIMEOUT_SECONDS: '86400',
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn', PORT: String(port), METRICS_PORT: '0', JWT_PUBLIC_KEY: keys.publicPem,
  };
  for (const e of ['main.js', 'worker.js']) children.push(spawn(process.execPath, [path.join(root, 'dist/apps/cost-analysis', e)], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
  await waitReady(port, 'cost-analysis');
  const api = async (p, body) => {
    const res = await fetch(`http://127.0.0.1:${port}/cost-analysis/v1/${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${owner}` }, body: JSON.stringify(body) });
    const json = await res.json();
    if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const register = (name, plugin_info) => api('data-source/register', { name, resource_group: 'WORKSPACE', plugin_info, schedule: { state: 'DISABLED' } });
  const builtin = await register('built-in', { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: fileUrl } });
  const remote = await register('grpc', { plugin_id: 'plugin-bench-cost', options: {} });
  if (remote.plugin_info.metadata.currency !== 'USD') throw new Error(`the plugin was not called: ${JSON.stringify(remote.plugin_info)}`);

  const collect = async (ds) => {
    const t0 = Date.now();
    const job = await api('data-source/sync', { data_source_id: ds.data_source_id });
    for (;;) {
      await new Promise((r) => setTimeout(r, 100));
      const j = await api('job/get', { job_id: job.job_id });
      if (j.status === 'SUCCESS') break;
      if (j.status !== 'IN_PROGRESS') throw new Error(`${ds.name}: job ${j.status} ${JSON.stringify(await api('job-task/list', { job_id: job.job_id }))}`);
      if (Date.now() - t0 > TIMEOUT_MS) throw new Error('collection timed out');
    }
    const seconds = (Date.now() - t0) / 1000;
    const { rows: [c] } = await pool.query(`SELECT count(*)::int AS n, sum(c.cost)::float8 AS cost FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.data_source_id = $1`, [ds.data_source_id]);
    if (c.n !== ROWS) throw new Error(`${ds.name}: ${c.n} rows collected, ${ROWS} expected`);
    return { rps: ROWS / seconds, sum: c.cost };
  };
  // The worker's memory (Linux): its RSS before the runs and its peak (VmHWM) after them.
  const workerPid = children[2].pid;
  const procKb = (field) => {
    try {
      return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${workerPid}/status`, 'utf8'))?.[1]) || undefined;
    } catch {
      return undefined;
    }
  };
  const rssBefore = procKb('VmRSS');
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ratios = [];
  const b = [];
  const g = [];
  for (let run = 0; run <= RUNS; run++) {
    const order = run % 2 ? [remote, builtin] : [builtin, remote];
    const got = {};
    for (const ds of order) got[ds.name] = await collect(ds);
    if (Math.abs(got['built-in'].sum - got.grpc.sum) > 1e-6 * got['built-in'].sum) throw new Error(`sums differ: ${JSON.stringify(got)}`);
    if (run === 0) continue; // warm-up
    b.push(got['built-in'].rps);
    g.push(got.grpc.rps);
    ratios.push(got.grpc.rps / got['built-in'].rps);
    console.log(`run ${run}: built-in http-file ${fmt(got['built-in'].rps)} rows/s, gRPC plugin ${fmt(got.grpc.rps)} rows/s (${(got.grpc.rps / got['built-in'].rps).toFixed(2)}×)`);
  }
  const ratio = median(ratios);
  console.log(`\n${fmt(ROWS)} rows, ${PAGE} a message: gRPC plugin ${fmt(median(g))} rows/s, built-in ${fmt(median(b))} rows/s; paired ratio ${ratio.toFixed(2)}× (target ≥ 0.7×)`);
  const peak = procKb('VmHWM');
  if (peak && rssBefore) console.log(`worker RSS: ${(rssBefore / 1024).toFixed(1)} MB before the runs, peak ${(peak / 1024).toFixed(1)} MB (VmHWM)`);
  record({ measure: `collection of ${fmt(ROWS)} rows through a gRPC plugin (kit) vs the built-in http-file`, ours: median(g), baseline: median(b), ratio, unit: 'rows/s', goal: '≥ 0.7×', met: ratio >= 0.7 });
  await pool.end();
  await pluginPool.end();
  files.close();
  plugin.send('stop');
  for (const c of children.slice(1)) c.kill('SIGTERM');
  await new Promise((r) => plugin.once('exit', r));
  process.exit(0);
}
