#!/usr/bin/env node
// cost-analysis at scale, through the built app and worker (dist/apps/cost-analysis):
//  1. collection: a generated CSV of COST_BENCH_ROWS cost rows (24 months, 3 currencies) collected by
//     data-source/sync (HTTP fetch over loopback, parse, validate, COPY, unified cost rebuild) vs a plain
//     `\copy` of the same file into a bare table with psql. Target: >= 0.15x COPY's rows/s (issue #31; #22 had asked 0.5x before the floor was measured),
//     with the phases' times and the floor: psql's COPY of the collected rows into cost and unified_cost.
//  2. analyze: unified-cost/analyze, 12 months MONTHLY, group_by provider + product, sum cost.USD,
//     through HTTP, vs the same query hand-written in SQL on the same table. Target: <= 1.3x.
//  3. the same analyze over COST_BENCH_UNIFIED_ROWS synthetic unified cost rows over 36 months (the rollup
//     itself at scale; unified_cost is partitioned by month): 12 of the 36 months, with the EXPLAIN of the
//     SQL the API runs (compiled by the app's own query DSL), which must read only those 12 partitions.
//   npm run build && node tools/bench/cost-analysis/bench.mjs   (BENCH_DIST=<another build dir> to compare two builds)
//   BENCH_CPU_PROF=dir: V8 CPU profiles of the app and the worker.
//   sizes: COST_BENCH_ROWS (default 200000; the issue's figure is 10000000), COST_BENCH_UNIFIED_ROWS
//   (default 200000), BENCH_REPEAT (default 15), BENCH_WARMUP (default 20). Loopback only; every phase is bounded by a timeout.
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { once } from 'node:events';
import pg from 'pg';
import Redis from 'ioredis';
import { record } from '../lib/report.mjs';
import { freshDatabase, root, signingKeys, waitReady } from '../lib/setup.mjs';
import { createRequire } from 'node:module';
import { bundle } from '../../build/bundle.mjs';

const ROWS = Number(process.env.COST_BENCH_ROWS || 200_000);
const UNIFIED_ROWS = Number(process.env.COST_BENCH_UNIFIED_ROWS || 200_000);
const REPEAT = Number(process.env.BENCH_REPEAT || 15);
const WARMUP = Number(process.env.BENCH_WARMUP || 20);
const COLLECT_TIMEOUT_MS = Number(process.env.COST_BENCH_TIMEOUT_MS || 30 * 60_000);
// COST_BENCH_DB / COST_BENCH_PORT: another database and port, when someone else runs this benchmark on the same host.
const dbName = process.env.COST_BENCH_DB || 'bench_cost_analysis';
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const prefix = `bench:cost:${process.pid}:`;
const appPort = Number(process.env.COST_BENCH_PORT || 18102);
const children = [];
const stopAll = () => children.forEach((c) => c.kill('SIGTERM'));
process.on('exit', stopAll);
const fmt = (n) => Math.round(n).toLocaleString('en-US');

// ---------------------------------------------------------------- the CSV
const dir = path.join(root, 'tmp/bench-cost-analysis');
mkdirSync(dir, { recursive: true });
const file = path.join(dir, `costs-${ROWS}.csv`);
const PROVIDERS = ['aws', 'google_cloud', 'azure'];
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'ap-northeast-2', 'ap-southeast-1', 'sa-east-1'];
const CURRENCIES = ['USD', 'EUR', 'KRW'];
if (!existsSync(file)) {
  const out = createWriteStream(file);
  out.write('cost,currency,usage_quantity,provider,region_code,product,account,usage_type,usage_unit,year,month,day\n');
  let buf = '';
  for (let i = 0; i < ROWS; i++) {
    // Independent-looking dimensions (multiplicative hashing), 24 months of 28 days.
    const h = (k) => Math.imul(i + 1, k) >>> 7;
    const m = i % 24;
    const cur = CURRENCIES[h(0x9e3779b1) % 3];
    const cost = ((i * 7919) % 100_000) / 100;
    buf += `${cur === 'KRW' ? cost * 1000 : cost},${cur},${i % 1000},${PROVIDERS[h(0x85ebca6b) % 3]},${REGIONS[h(0xc2b2ae35) % 6]},product-${h(0x27d4eb2f) % 20},acct-${h(0x165667b1) % 10},type-${h(0xd3a2646c) % 5},Hrs,${2023 + (m >= 12 ? 1 : 0)},${(m % 12) + 1},${1 + (h(0xfd7046c5) % 28)}\n`;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
}
console.log(`CSV: ${fmt(ROWS)} rows, ${(statSync(file).size / 1e6).toFixed(1)} MB (${path.relative(root, file)})`);

// ---------------------------------------------------------------- database, app, worker
const dbUrl = await freshDatabase('cost-analysis', dbName);
// the plugin module's table, where the app resolves published plugins (empty here: the built-in serves)
const pluginDbUrl = await freshDatabase('plugin', `${dbName}_plugins`);
const pool = new pg.Pool({ connectionString: dbUrl, max: 2 });

const keys = signingKeys();
const token = (domain, role, ws) =>
  keys.token({ user_id: 'bench', domain_id: domain, workspace_id: ws ?? '', role_type: role, role_id: 'managed', scope: ws ? 'WORKSPACE' : 'DOMAIN' });
const owner = await token('d1', 'WORKSPACE_OWNER', 'ws-1');
const env = {
  ...process.env, DATABASE_URL: dbUrl, PLUGIN_DATABASE_URL: pluginDbUrl, REDIS_URL: redisUrl, QUEUE_PREFIX: `${prefix}bull`, DIRECTORY_PREFIX: prefix,
  OUTBOUND_ALLOW_PRIVATE: '127.0.0.0/8,::1', JOB_TIMEOUT_SECONDS: '86400', LOG_LEVEL: process.env.LOG_LEVEL || 'warn', PORT: String(appPort),
  JWT_PUBLIC_KEY: keys.publicPem,
};
// BENCH_CPU_PROF=dir: the app and the worker write V8 CPU profiles there (main-*.cpuprofile, worker-*.cpuprofile).
const nodeArgs = (entry) => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${entry.replace('.js', '')}-${process.pid}.cpuprofile`] : []);
for (const entry of ['main.js', 'worker.js']) {
  children.push(spawn(process.execPath, [...nodeArgs(entry), path.join(path.resolve(root, process.env.BENCH_DIST || 'dist/apps/cost-analysis'), entry)], { env, stdio: ['ignore', process.env.BENCH_LOGS ? 'inherit' : 'ignore', 'inherit'] }));
}
const api = async (p, body, auth = owner) => {
  const res = await fetch(`http://127.0.0.1:${appPort}/cost-analysis/v1/${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${p}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
await waitReady(appPort, 'cost-analysis');

// The file server: streams the CSV from disk.
const files = http.createServer((req, res) => {
  res.setHeader('content-type', 'text/csv');
  createReadStream(file).pipe(res);
});
await new Promise((r) => files.listen(0, '127.0.0.1', r));
const fileUrl = `http://127.0.0.1:${files.address().port}/costs.csv`;

// ---------------------------------------------------------------- 1. collection vs COPY
const copy = (() => {
  const ddl = `DROP TABLE IF EXISTS copy_baseline; CREATE TABLE copy_baseline (cost float8, currency text, usage_quantity float8, provider text, region_code text, product text, account text, usage_type text, usage_unit text, year int, month int, day int)`;
  spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', dbName, '-q', '-c', ddl], { stdio: 'inherit' });
  const t0 = process.hrtime.bigint();
  const r = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', dbName, '-q', '-c', `\\copy copy_baseline FROM '${file}' WITH (FORMAT csv, HEADER)`], { stdio: 'inherit', timeout: COLLECT_TIMEOUT_MS });
  if (r.status !== 0) throw new Error('psql \\copy failed');
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', dbName, '-q', '-c', 'DROP TABLE copy_baseline'], { stdio: 'inherit' });
  return { seconds: s, rps: ROWS / s };
})();
console.log(`COPY (psql \\copy, bare table): ${copy.seconds.toFixed(1)} s, ${fmt(copy.rps)} rows/s`);

// The worker's memory (Linux): RSS before the sync and its peak (VmHWM) once the job is done, to show
// that collection memory stays flat in the number of rows (issue #22).
const workerPid = children[1].pid;
const procKb = (field) => {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${workerPid}/status`, 'utf8'))?.[1]) || undefined;
  } catch {
    return undefined;
  }
};
const workerRssBefore = procKb('VmRSS');
const ds = await api('data-source/register', { name: 'bench', resource_group: 'WORKSPACE', plugin_info: { plugin_id: 'plugin-http-file-cost-datasource', options: { base_url: fileUrl } }, schedule: { state: 'DISABLED' } });
// The work a collection costs, beside its time (a loaded machine stretches the time, not the work): CPU
// seconds of the worker and of the PostgreSQL backends serving this database (Linux /proc; a backend
// that exits during the job is not counted), and the WAL PostgreSQL wrote.
const cpuSeconds = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
};
const backendsCpu = async () => {
  const { rows } = await pool.query(`SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`, [dbName]);
  return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
};
const walLsn = async () => (await pool.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l;
/** One sync of the data source to SUCCESS: its job, seconds, and the work it cost. */
async function syncOnce() {
  const work0 = { worker: cpuSeconds(children[1].pid), backends: await backendsCpu(), wal: await walLsn() };
  const t0 = Date.now();
  const job = await api('data-source/sync', { data_source_id: ds.data_source_id });
  let final;
  while (!final) {
    await new Promise((r) => setTimeout(r, 250));
    const j = await api('job/get', { job_id: job.job_id });
    if (j.status !== 'IN_PROGRESS') final = j;
    if (Date.now() - t0 > COLLECT_TIMEOUT_MS) throw new Error('collection timed out');
  }
  const seconds = (Date.now() - t0) / 1000;
  if (final.status !== 'SUCCESS') throw new Error(`collection job ${final.status}: ${JSON.stringify(await api('job-task/list', { job_id: job.job_id }))}`);
  const work1 = { worker: cpuSeconds(children[1].pid), backends: await backendsCpu(), wal: await walLsn() };
  const backendCpu = [...work1.backends].reduce((sum, [pid, s]) => sum + s - (work0.backends.get(pid) ?? 0), 0);
  const walMb = Number((await pool.query('SELECT pg_wal_lsn_diff($1, $2) AS d', [work1.wal, work0.wal])).rows[0].d) / 1e6;
  const work = `worker CPU ${(work1.worker - work0.worker).toFixed(2)} s, PostgreSQL backends CPU ${backendCpu.toFixed(2)} s, WAL ${walMb.toFixed(1)} MB`;
  return { job, seconds, work };
}
const first = await syncOnce();
const { job, seconds: collectSeconds } = first;
console.log(`collection work: ${first.work}`);
const [task] = (await api('job-task/list', { job_id: job.job_id })).results;
const unifiedCount = (await pool.query(`SELECT count(*)::int AS n FROM unified_cost`)).rows[0].n;
const collectRps = ROWS / collectSeconds;
console.log(`collection (sync -> job SUCCESS, incl. unified rebuild): ${collectSeconds.toFixed(1)} s, ${fmt(collectRps)} rows/s, created_count ${fmt(task.created_count)}, ${fmt(unifiedCount)} unified cost rows`);
console.log(`  collection / COPY = ${(collectRps / copy.rps).toFixed(2)}x  (target >= 0.15x, issue #31)`);
const workerPeak = procKb('VmHWM');
if (workerPeak) console.log(`  worker RSS: ${(workerRssBefore / 1024).toFixed(1)} MB before the sync, peak ${(workerPeak / 1024).toFixed(1)} MB (VmHWM, ${fmt(ROWS)} rows)`);
record({ measure: `collection of ${fmt(ROWS)} rows vs COPY`, ours: collectRps, baseline: copy.rps, unit: 'rows/s', goal: '≥ 0.5×', met: collectRps / copy.rps >= 0.5 });

// Where the time went, from the rows' own timestamps: the wait for the worker, the task (fetch, parse,
// validate, COPY into cost), the job's close (earlier rows replaced, the unified rebuild).
const { rows: [phases] } = await pool.query(
  `SELECT extract(epoch FROM t.started_at - j.created_at) AS dispatch, extract(epoch FROM t.finished_at - t.started_at) AS task,
     extract(epoch FROM j.finished_at - t.finished_at) AS close
   FROM job j JOIN job_task t ON t.job_id = j.job_id WHERE j.job_id = $1`,
  [job.job_id],
);
console.log(`  phases: dispatch ${Number(phases.dispatch).toFixed(2)} s, task (fetch, parse, COPY into cost) ${Number(phases.task).toFixed(2)} s, close (replace, unified rebuild) ${Number(phases.close).toFixed(2)} s`);

// The steady state of production: the same bill synced again (its months' earlier rows replaced, the
// unified rows rebuilt over a table that already holds them).
const again = await syncOnce();
console.log(`re-sync of the same ${fmt(ROWS)} rows: ${again.seconds.toFixed(1)} s, ${fmt(ROWS / again.seconds)} rows/s, ${(ROWS / again.seconds / copy.rps).toFixed(2)}x the COPY; work: ${again.work}`);

// The floor of any collection into this schema: psql's COPY of the very rows the collector wrote (21
// columns, partition routing, the cost index), no parsing, no rebuild, rolled back; the same for the
// unified rows the rebuild wrote (after deleting them, as the rebuild deletes the months' rows).
const floorOf = async (table, where, before = '') => {
  const columns = (await pool.query(`SELECT string_agg(column_name, ', ' ORDER BY ordinal_position) AS c FROM information_schema.columns WHERE table_name = $1 AND table_schema = 'public'`, [table])).rows[0].c;
  const lines = path.join(dir, `${table}-lines.txt`);
  const run = (args) => {
    const r = spawnSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', dbName, '-q', '-v', 'ON_ERROR_STOP=1', ...args], { stdio: ['ignore', 'ignore', 'inherit'], timeout: COLLECT_TIMEOUT_MS });
    if (r.status !== 0) throw new Error(`psql failed: ${args.join(' ')}`);
  };
  run(['-c', `\\copy (SELECT ${columns} FROM ${table} WHERE ${where}) TO '${lines}'`]);
  const script = path.join(dir, `${table}-floor.sql`);
  writeFileSync(script, `BEGIN;\n${before}\\copy ${table} (${columns}) FROM '${lines}'\nROLLBACK;\n`);
  const t = process.hrtime.bigint();
  run(['-f', script]);
  return Number(process.hrtime.bigint() - t) / 1e9;
};
const costFloor = await floorOf('cost', 'true');
// The rebuild deletes the months' unified rows first: so does this (their primary keys would collide).
const unifiedFloor = await floorOf('unified_cost', `domain_id = 'd1'`, `DELETE FROM unified_cost WHERE domain_id = 'd1';\n`);
console.log(`  floor: psql COPY of the collector's ${fmt(ROWS)} cost rows into cost ${costFloor.toFixed(2)} s (${(copy.seconds / costFloor).toFixed(2)}x the bare COPY's rate), of the ${fmt(unifiedCount)} unified rows into unified_cost ${unifiedFloor.toFixed(2)} s; together ${(copy.seconds / (costFloor + unifiedFloor)).toFixed(2)}x`);
record({ measure: `the floor: psql COPY of the collected rows into cost and unified_cost, vs the bare COPY`, ours: ROWS / (costFloor + unifiedFloor), baseline: copy.rps, unit: 'rows/s' });

// ---------------------------------------------------------------- 2./3. analyze vs hand-written SQL
await pool.query('VACUUM ANALYZE unified_cost');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/**
 * The median of REPEAT timed runs of each function, after WARMUP untimed runs of each. A server runs
 * warm: over its first ~20 analyze calls V8 is still compiling the request's code (41.7 against 33.4 ms
 * of SQL in the first ten calls at 200k rows, 32.1 against 29.5 from the 40th on). With several,
 * they take turns (a, b, then b, a, ...), so a neighbour loading the shared machine for a while
 * slows them alike rather than whichever ran then.
 */
async function time(...fns) {
  for (let i = 0; i < WARMUP; i++) for (const fn of fns) await fn();
  const xs = fns.map(() => []);
  for (let i = 0; i < REPEAT; i++) {
    for (const k of i % 2 ? [...fns.keys()].reverse() : [...fns.keys()]) {
      const t = process.hrtime.bigint();
      await fns[k]();
      xs[k].push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  return fns.length === 1 ? median(xs[0]) : xs.map(median);
}
const analyzeQuery = {
  granularity: 'MONTHLY', start: '2024-01', end: '2024-12', group_by: ['provider', 'product'],
  fields: { cost: { key: 'cost.USD', operator: 'sum' } },
};
async function compare(label, auth, where, params) {
  const viaApi = await api('unified-cost/analyze', { query: analyzeQuery, is_confirmed: true }, auth);
  const hand = `SELECT provider, product, billed_month AS date, sum(cost_usd) AS cost FROM unified_cost
    WHERE ${where} AND is_confirmed AND billed_month >= '2024-01' AND billed_month < '2025-01' GROUP BY 1, 2, 3`;
  const handRows = (await pool.query(hand, params)).rows;
  if (handRows.length !== viaApi.results.length) throw new Error(`${label}: analyze answered ${viaApi.results.length} rows, SQL ${handRows.length}`);
  const [dsl, sql] = await time(() => api('unified-cost/analyze', { query: analyzeQuery, is_confirmed: true }, auth), () => pool.query(hand, params));
  console.log(`${label}: analyze ${dsl.toFixed(1)} ms (HTTP) vs hand-written SQL ${sql.toFixed(1)} ms = ${(dsl / sql).toFixed(2)}x  (target <= 1.3x), ${viaApi.results.length} result rows`);
  record({ measure: label, ours: dsl, baseline: sql, unit: 'ms', goal: '≤ 1.3×', met: dsl / sql <= 1.3 });
  return { dsl, sql };
}
await compare(`analyze over the rollup of ${fmt(ROWS)} cost rows (${fmt(unifiedCount)} unified rows)`, owner, `domain_id = $1 AND workspace_id = $2`, ['d1', 'ws-1']);
const raw = await time(() =>
  pool.query(
    `SELECT provider, product, billed_month, sum(cost * CASE currency WHEN 'USD' THEN 1 WHEN 'EUR' THEN 1 / 0.92 ELSE 1 / 1380.0 END)
     FROM cost c JOIN job_task t ON t.task_no = c.task_no WHERE t.domain_id = 'd1' AND billed_month >= '2024-01' AND billed_month < '2025-01' GROUP BY 1, 2, 3`,
  ),
);
console.log(`  for reference, the same numbers straight from the ${fmt(ROWS)} raw cost rows in SQL: ${raw.toFixed(1)} ms`);

if (UNIFIED_ROWS > 0) {
  // A domain whose unified cost table itself holds UNIFIED_ROWS rows (36 months: 2023-01 to 2025-12), each
  // month in its own partition (made as the app makes them, before the rows come).
  await pool.query(`SELECT ensure_month_partition(t, to_char(date '2023-01-01' + make_interval(months => i), 'YYYY-MM'))
    FROM unnest(ARRAY['cost', 'unified_cost']) AS t, generate_series(0, 35) AS i`);
  await pool.query(
    `INSERT INTO unified_cost (domain_id, unified_cost_id, workspace_id, project_id, service_account_id, data_source_id, provider, region_code,
       region_key, product, usage_type, usage_unit, billed_year, billed_month, aggregation_date, exchange_date, exchange_source, currency,
       is_confirmed, cost, cost_krw, cost_usd, cost_jpy, service_account_name, data_source_name, project_name, workspace_name)
     SELECT 'd-big', 'uc-' || lpad(to_hex(i), 12, '0'), 'ws-1', 'project-' || (i % 50), '', 'ds-1', (ARRAY['aws','google_cloud','azure'])[1 + i % 3],
       'r' || (i % 6), '', 'product-' || (i % 40), 'type-' || (i % 7), 'Hrs', m.y, m.ym, '', '', 'MANUAL', 'USD', true,
       jsonb_build_object('KRW', (i % 1000) * 1380.0, 'USD', (i % 1000)::float8, 'JPY', (i % 1000) * 150.0), (i % 1000) * 1380.0, (i % 1000)::float8, (i % 1000) * 150.0,
       '', 'bench', 'project', 'ws-1'
     FROM generate_series(1, $1) i,
     LATERAL (SELECT to_char(date '2023-01-01' + make_interval(months => i % 36), 'YYYY') AS y, to_char(date '2023-01-01' + make_interval(months => i % 36), 'YYYY-MM') AS ym) m`,
    [UNIFIED_ROWS],
  );
  await pool.query('VACUUM ANALYZE unified_cost');
  // The plan of the SQL the API runs for this analyze (the app's DSL compiler, the service's scope).
  const explainOut = path.join(root, 'tmp/bench-cost-analysis/explain.cjs');
  await bundle({ entryPoints: [path.join(root, 'tools/bench/cost-analysis/explain-entry.ts')], outfile: explainOut });
  const { compileAnalyze, unifiedCostResource } = createRequire(import.meta.url)(explainOut);
  const compiled = compileAnalyze(unifiedCostResource, { ...analyzeQuery, date_field: 'billed_month' }, [
    { key: 'domain_id', value: 'd-big', operator: 'eq' },
    { key: 'is_confirmed', value: true, operator: 'eq' },
  ]);
  const plan = (await pool.query(`EXPLAIN ${compiled.text}`, compiled.values)).rows.map((r) => r['QUERY PLAN']);
  const scanned = [...new Set(plan.join('\n').match(/unified_cost_(p\d{6}|default)/g) ?? [])].sort();
  const partitions = (await pool.query(`SELECT count(*)::int AS n FROM pg_inherits WHERE inhparent = 'unified_cost'::regclass`)).rows[0].n;
  console.log(`EXPLAIN of the API's analyze (12 of 36 months of d-big; unified_cost has ${partitions} partitions):\n${plan.map((l) => `    ${l}`).join('\n')}`);
  console.log(`  partitions read: ${scanned.length} (${scanned[0]} .. ${scanned.at(-1)})`);
  const want = Array.from({ length: 12 }, (_, i) => `unified_cost_p2024${String(i + 1).padStart(2, '0')}`);
  const pruned = scanned.length === 12 && want.every((p) => scanned.includes(p));
  record({ measure: `analyze 12 of 36 months: partitions read (of ${partitions})`, ours: scanned.length, baseline: 12, unit: 'partitions', goal: 'only the 12', met: pruned });
  await compare(`analyze over ${fmt(UNIFIED_ROWS)} unified rows (domain admin, 12 of 36 months, partitioned)`, await token('d-big', 'DOMAIN_ADMIN'), `domain_id = $1`, ['d-big']);
}

// ---------------------------------------------------------------- cleanup
files.close();
await pool.end();
stopAll();
const redis = new Redis(redisUrl);
let cursor = '0';
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
  if (keys.length) await redis.del(...keys);
  cursor = next;
} while (cursor !== '0');
redis.disconnect();
process.exit(0);
