#!/usr/bin/env node
// cloud-service/export of BENCH_ROWS cloud services (default 1M) to CSV through the inventory app (the
// export request, then the streamed download), with the app's peak RSS, against PostgreSQL's own
// `COPY (SELECT the same columns, same order) TO STDOUT WITH CSV` through psql.
//   node tools/build/build-app.mjs inventory && node tools/bench/inventory/export.mjs
//   (BENCH_ROWS, BENCH_ROUNDS (5), BENCH_NODE_ARGS, BENCH_DIST)    targets: app peak RSS < 250 MB, speed >= 1.0x COPY
// Both sides are read the same way (bytes and lines counted), in alternating pairs; the figure is the
// median of the pairs' ratios (COPY time / app time), so a drift of the shared machine hits both. Each
// download also reports the app process's CPU time (user + system).
// A/B: BENCH_BASE_DIST=<another build, e.g. /work/base/dist/apps/inventory> also runs that build (port
// 18107) in every round, the two apps' order alternating. BENCH_SHA=1 hashes the apps' files (SHA-256,
// which must be one; it costs this process CPU, so the app/COPY figure is then a little low).
import { createHash } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { dbUrl, ensureData, peakRssMb, rows, startApp, token } from './lib/setup.mjs';
import { record } from '../lib/report.mjs';

await ensureData();
const app = await startApp(18106);
const base = process.env.BENCH_BASE_DIST ? await startApp(18107, process.env.BENCH_BASE_DIST) : null;
const rssAtStart = await peakRssMb(app.proc.pid);

/** CPU time (user, system) of a process so far, in seconds. */
function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(f[11]) / 100, sys: Number(f[12]) / 100 };
}

const fields = [
  'cloud_service_id', 'name', 'provider', 'cloud_service_group', 'cloud_service_type', 'region_code', 'project_id',
  { key: 'created_at', name: 'Created' }, { key: 'data.power_state', name: 'Power' }, { key: 'tags.env', name: 'Env' },
  { key: 'ip_addresses', name: 'IP' },
];
const copySql = `COPY (SELECT cloud_service_id, name, provider, cloud_service_group, cloud_service_type, region_code, project_id,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), data->>'power_state', tags->>'env', array_to_string(ip_addresses, E'\\n')
  FROM cloud_service WHERE domain_id = 'd1' AND workspace_id = 'ws-1' AND state = 'ACTIVE' ORDER BY cloud_service_id)
  TO STDOUT WITH (FORMAT csv, HEADER)`;

function post(app, path, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }, (r) => {
      let s = '';
      r.on('data', (c) => (s += c));
      r.on('end', () => (r.statusCode === 200 ? resolve(JSON.parse(s)) : reject(new Error(`${r.statusCode} ${s}`))));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Reads a stream to its end, counting bytes and lines (and hashing them, with `hash`), keeping nothing. */
function count(stream, hash) {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let lines = 0;
    const h = hash ? createHash('sha256') : null;
    stream.on('data', (c) => {
      bytes += c.length;
      for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
      h?.update(c);
    });
    stream.on('end', () => resolve({ bytes, lines, sha: h?.digest('hex') }));
    stream.on('error', reject);
  });
}

/** Downloads a URL, counting bytes and lines. */
function drain(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (r) => {
      if (r.statusCode !== 200) return reject(new Error(`download answered ${r.statusCode}`));
      count(r, process.env.BENCH_SHA === '1').then(resolve, reject);
    }).on('error', reject);
  });
}

function copy() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const p = spawn('psql', [dbUrl, '-X', '-q', '-c', copySql], { stdio: ['ignore', 'pipe', 'inherit'] });
    const counted = count(p.stdout);
    p.on('exit', (code) =>
      code === 0 ? counted.then((got) => resolve({ ...got, ms: performance.now() - started }), reject) : reject(new Error(`psql exited ${code}`)),
    );
  });
}

async function viaApp(app) {
  const started = performance.now();
  const { download_url } = await post(app, '/inventory/v1/cloud-service/export', {
    file_format: 'CSV',
    options: [{ name: 'Cloud services', query_type: 'SEARCH', search_query: { fields, sort: [{ key: 'cloud_service_id' }] } }],
  });
  const answered = performance.now() - started;
  const cpu = cpuSeconds(app.proc.pid);
  const got = await drain(download_url);
  const after = cpuSeconds(app.proc.pid);
  return { ...got, ms: performance.now() - started, answered, user: after.user - cpu.user, cpu: after.user + after.sys - cpu.user - cpu.sys };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const rounds = Number(process.env.BENCH_ROUNDS || 5);
console.log(`export of ${rows} cloud services to CSV (${fields.length} columns), app (node ${process.env.BENCH_NODE_ARGS ?? '--max-old-space-size=128'}) vs COPY, alternating, ${rounds} rounds${base ? `, and the base build ${process.env.BENCH_BASE_DIST}` : ''}`);
const ratios = [];
const baseRatios = [];
const cpuRatios = [];
const shas = new Set();
const show = (a) => `${(a.ms / 1000).toFixed(2)} s (${(a.bytes / 1e6).toFixed(0)} MB, ${a.lines} lines, app CPU ${a.cpu.toFixed(2)} s (user ${a.user.toFixed(2)}), answered in ${a.answered.toFixed(0)} ms)`;
for (let round = 1; round <= rounds; round++) {
  const c = await copy();
  let a;
  let b;
  if (base && round % 2 === 0) (b = await viaApp(base)), (a = await viaApp(app));
  else (a = await viaApp(app)), (b = base ? await viaApp(base) : null);
  console.log(`  #${round}  COPY ${(c.ms / 1000).toFixed(2)} s (${(c.bytes / 1e6).toFixed(0)} MB, ${c.lines} lines)   app ${show(a)}   speed app/COPY ${(c.ms / a.ms).toFixed(2)}`);
  ratios.push(c.ms / a.ms);
  shas.add(a.sha);
  if (b) {
    console.log(`       base ${show(b)}   speed base/COPY ${(c.ms / b.ms).toFixed(2)}   app/base: speed ${(b.ms / a.ms).toFixed(2)}, CPU ${(a.cpu / b.cpu).toFixed(2)}`);
    baseRatios.push(c.ms / b.ms);
    cpuRatios.push(a.cpu / b.cpu);
    shas.add(b.sha);
  }
}
const peak = await peakRssMb(app.proc.pid);
console.log(`speed app/COPY: median ${median(ratios).toFixed(2)}, min ${Math.min(...ratios).toFixed(2)}, max ${Math.max(...ratios).toFixed(2)} (target >= 1.0)`);
if (base) {
  console.log(`speed base/COPY: median ${median(baseRatios).toFixed(2)};  app CPU / base CPU per download: median ${median(cpuRatios).toFixed(2)}`);
}
if (process.env.BENCH_SHA === '1') console.log(`file SHA-256: ${[...shas].join(', ')}${shas.size === 1 ? '' : '  (DIFFERENT FILES)'}`);
console.log(`app peak RSS: ${peak.toFixed(0)} MB (at start ${rssAtStart.toFixed(0)} MB) (target < 250 MB)`);
const m = median(ratios);
record({ measure: `CSV export speed vs COPY TO (median of ${rounds} pairs, inverse time)`, ours: m, unit: '', ratio: m, goal: '≥ 1.0×', met: m >= 1.0 });
record({ measure: 'CSV export peak RSS', ours: peak, unit: 'MB', goal: '< 250 MB', met: peak < 250 });
await app.stop();
await base?.stop();
process.exit(shas.size === 1 ? 0 : 1);
