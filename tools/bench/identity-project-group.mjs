#!/usr/bin/env node
// identity's request path against the floor: project-group/get and project-group/list (a page of 20
// out of BENCH_GROUPS, one filter) through the identity app (token, body, zod, proto3 defaults,
// logging, metrics, the query compiler) against a minimal node:http + pg server running the same SQL
// (lib/raw-project-group-server.mjs), at the same concurrency, side by side in one run. Reports
// throughput, p50/p99 and each server's CPU time per request (from /proc: robust to a busy machine).
//   npm run build && node tools/bench/identity-project-group.mjs
//   BENCH_SECONDS (10), BENCH_CONCURRENCY (32), BENCH_GROUPS (10000), BENCH_OPS (get,list), BENCH_SLICES (5)
//   BENCH_APP=file       another build of identity's main.js (another checkout's dist), to compare two commits
//   BENCH_BASE_APP=file  in place of the raw server, another build of identity (BENCH_BASE_ENV: JSON added to its
//                        environment): one change against the build before it; figures are then not recorded
//   BENCH_CPU_PROF=dir   V8 CPU profiles of both servers
//   BENCH_STRACE=1       system calls per request of both servers (strace -c; throughput meaningless then)
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { bundle } from '../build/bundle.mjs';
import { load, summarize } from './lib/load.mjs';
import { record } from './lib/report.mjs';
import { cpuSplit, freshDatabase, root, signingKeys, waitReady } from './lib/setup.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 32);
const groups = Number(process.env.BENCH_GROUPS || 10_000);

const dbUrl = await freshDatabase('identity', 'bench_identity');
const seed = new pg.Client({ connectionString: dbUrl });
await seed.connect();
await seed.query(`INSERT INTO domain (domain_id, name) VALUES ('d1', 'd1')`);
await seed.query(
  `INSERT INTO project_group (domain_id, project_group_id, workspace_id, name, tags, users)
   SELECT 'd1', 'pg-' || lpad(i::text, 12, '0'), 'ws-1', 'group ' || i, jsonb_build_object('n', i), ARRAY['owner']
   FROM generate_series(1, $1) i`,
  [groups],
);
await seed.query('ANALYZE');
await seed.end();

const keys = signingKeys();
const token = await keys.token();

const appPort = 18101;
const rawPort = 18198;
// BENCH_CPU_PROF=dir: both servers write a V8 CPU profile there (app-*.cpuprofile, raw-*.cpuprofile).
const profile = (name) => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${name}-${process.pid}.cpuprofile`] : []);
const identityEnv = (port) => ({
  ...process.env, PORT: String(port), DATABASE_URL: dbUrl, BOOTSTRAP_DOMAIN_ID: 'd1', BOOTSTRAP_PASSWORD: 'bench-password',
  JWT_PRIVATE_KEY: keys.privatePem, JWT_PUBLIC_KEY: keys.publicPem, LOG_LEVEL: process.env.LOG_LEVEL || 'info',
});
const app = spawn(process.execPath, [...profile('app'), process.env.BENCH_APP || path.join(root, 'dist/apps/identity/main.js')], {
  env: identityEnv(appPort),
  stdio: ['ignore', 'ignore', 'inherit'],
});

// The raw server, in its own process as the app is (a server sharing the load generator's process
// would skip the context switches the app pays). BENCH_BASE_APP=file: another build of identity's
// main.js takes its place (with BENCH_BASE_ENV, JSON, added to its environment), to measure one change
// against the build before it in the same alternating slices.
const baseApp = process.env.BENCH_BASE_APP;
const listSql = path.join(root, 'dist/bench/project-group-list-sql.cjs');
if (!baseApp) await bundle({ entryPoints: [path.join(root, 'tools/bench/lib/project-group-list-sql.ts')], outfile: listSql });
const raw = baseApp
  ? spawn(process.execPath, [...profile('base'), path.resolve(baseApp)], { env: { ...identityEnv(rawPort), ...JSON.parse(process.env.BENCH_BASE_ENV || '{}') }, stdio: ['ignore', 'ignore', 'inherit'] })
  : spawn(process.execPath, [...profile('raw'), path.join(root, 'tools/bench/lib/raw-project-group-server.mjs')], {
      env: { ...process.env, PORT: String(rawPort), DATABASE_URL: dbUrl, RAW_LIST_SQL: listSql },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
// A benchmark that fails (it throws) must not leave its servers running.
process.on('exit', () => (app.kill('SIGTERM'), raw.kill('SIGTERM')));
await waitReady(appPort, 'identity');
await waitReady(rawPort, baseApp ? 'identity (the base build)' : 'the raw server');

// Context switches of a process's threads (voluntary: it waited; involuntary: it was preempted).
const contextSwitches = (pid) => {
  let n = 0;
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    const status = readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8');
    for (const m of status.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) n += Number(m[1]);
  }
  return n;
};
// BENCH_STRACE=1: counts each server's system calls during its measured run (strace -c; it slows the
// server down many times over, so its throughput figures mean nothing then) and prints them per request.
const straceOf = (pid) => {
  if (process.env.BENCH_STRACE !== '1') return undefined;
  const out = path.join(os.tmpdir(), `bench-strace-${pid}.txt`);
  const child = spawn('strace', ['-c', '-f', '-o', out, '-p', String(pid)], { stdio: 'ignore' });
  return { child, out };
};
const syscallsPerRequest = async (trace, requests) => {
  trace.child.kill('SIGINT');
  await new Promise((r) => trace.child.on('exit', r));
  const rows = readFileSync(trace.out, 'utf8').split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length >= 5 && /^\d/.test(f[3]) && f.at(-1) !== 'total');
  return rows.map((f) => ({ call: f.at(-1), perRequest: Number(f[3]) / requests })).filter((x) => x.perRequest >= 0.01).sort((x, y) => y.perRequest - x.perRequest);
};
const ops = {
  get: {
    body: (i) => ({ project_group_id: `pg-${String(((i * 7919) % groups) + 1).padStart(12, '0')}` }),
    goal: 'project-group/get',
  },
  list: {
    // names are "group <n>": "group 3" is in about a ninth of them; a page of 20, the count of all
    body: (i) => ({ query: { filter: [{ k: 'name', v: `group ${(i % 9) + 1}`, o: 'contain' }], page: { start: 1, limit: 20 } } }),
    goal: 'project-group/list (20 of a filtered count)',
  },
};
// The two servers are measured in alternating slices (BENCH_SLICES, raw then app, then app then raw,
// ...), so a neighbour that loads the shared machine for a while slows both alike rather than
// whichever ran then; each server's figures are summed over its slices.
const slices = Math.max(1, Number(process.env.BENCH_SLICES || 5));
const compare = async (op) => {
  const { body } = ops[op];
  const servers = [
    { label: baseApp ? 'base' : 'raw', port: rawPort, headers: baseApp ? { authorization: `Bearer ${token}` } : {}, pid: raw.pid },
    { label: 'identity', port: appPort, headers: { authorization: `Bearer ${token}` }, pid: app.pid },
  ].map((x) => ({ ...x, url: `http://127.0.0.1:${x.port}/identity/v2/project-group/${op}`, runs: [], user: 0, system: 0, switches: 0 }));
  for (const x of servers) await load({ url: x.url, body, headers: x.headers, concurrency, durationMs: 2000 }); // warm-up
  const traces = servers.map((x) => straceOf(x.pid));
  if (traces[0]) await new Promise((r) => setTimeout(r, 500)); // strace attached
  for (let i = 0; i < slices; i++) {
    for (const x of i % 2 ? [...servers].reverse() : servers) {
      const cpu0 = cpuSplit(x.pid);
      const switches0 = contextSwitches(x.pid);
      x.runs.push(await load({ url: x.url, body, headers: x.headers, concurrency, durationMs: (seconds * 1000) / slices }));
      const cpu1 = cpuSplit(x.pid);
      x.user += cpu1.user - cpu0.user;
      x.system += cpu1.system - cpu0.system;
      x.switches += contextSwitches(x.pid) - switches0;
    }
  }
  const results = [];
  for (const [k, x] of servers.entries()) {
    const r = summarize(x.runs);
    r.userUs = (x.user * 1e6) / r.requests;
    r.systemUs = (x.system * 1e6) / r.requests;
    r.cpuUs = r.userUs + r.systemUs;
    r.switches = x.switches / r.requests;
    if (traces[k]) {
      const calls = await syscallsPerRequest(traces[k], r.requests);
      console.log(`${x.label}: system calls per request: ${calls.map((c) => `${c.call} ${c.perRequest.toFixed(2)}`).join(', ')}`);
    }
    console.log(`${x.label.padEnd(10)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  CPU ${r.cpuUs.toFixed(0)} µs/request (user ${r.userUs.toFixed(0)}, system ${r.systemUs.toFixed(0)}), ${r.switches.toFixed(2)} context switches/request  (${r.requests} requests, ${r.errors} errors)`);
    results.push(r);
  }
  return results;
};
let errors = 0;
for (const op of (process.env.BENCH_OPS || 'get,list').split(',')) {
  console.log(`\nproject-group/${op}, ${groups} groups, concurrency ${concurrency}, ${seconds} s each in ${slices} alternating slices`);
  const [a, b] = await compare(op);
  errors += a.errors + b.errors;
  console.log(`ratio identity/${baseApp ? 'base' : 'raw'}: throughput ${(b.rps / a.rps).toFixed(2)} (goal >= 0.7), p99 ${(b.p99 / a.p99).toFixed(2)} (goal <= 2), CPU per request ${(b.cpuUs / a.cpuUs).toFixed(2)}`);
  const what = ops[op].goal;
  if (baseApp) continue; // an A/B of two builds: printed, not a figure of the platform
  record({ measure: `${what}: throughput vs raw node:http + pg`, ours: b.rps, baseline: a.rps, unit: 'req/s', goal: '≥ 0.7×', met: b.rps / a.rps >= 0.7 });
  record({ measure: `${what}: p99 vs raw`, ours: b.p99, baseline: a.p99, unit: 'ms', goal: '≤ 2×', met: b.p99 <= 2 * a.p99 });
  record({ measure: `${what}: server CPU per request vs raw`, ours: b.cpuUs, baseline: a.cpuUs, unit: 'µs' });
}

app.kill('SIGTERM');
await new Promise((r) => app.on('exit', r));
raw.kill('SIGTERM');
await new Promise((r) => raw.on('exit', r));
process.exit(errors ? 1 : 0);
