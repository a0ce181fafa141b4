#!/usr/bin/env node
// cloud-service/export of BENCH_ROWS cloud services (default 1M) to CSV through the inventory app (the
// export request, then the streamed download), with the app's peak RSS, against PostgreSQL's own
// `COPY (SELECT the same columns, same order) TO STDOUT WITH CSV` through psql.
//   node tools/build/build-app.mjs inventory && node tools/bench/inventory/export.mjs
//   (BENCH_ROWS, BENCH_ROUNDS (5), BENCH_NODE_ARGS)    targets: app peak RSS < 250 MB, speed >= 1.0x COPY
// Both sides are read the same way (bytes and lines counted), in alternating pairs; the figure is the
// median of the pairs' ratios (COPY time / app time), so a drift of the shared machine hits both.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { dbUrl, ensureData, peakRssMb, rows, startApp, token } from './lib/setup.mjs';
import { record } from '../lib/report.mjs';

await ensureData();
const app = await startApp(18106);
const rssAtStart = await peakRssMb(app.proc.pid);

const fields = [
  'cloud_service_id', 'name', 'provider', 'cloud_service_group', 'cloud_service_type', 'region_code', 'project_id',
  { key: 'created_at', name: 'Created' }, { key: 'data.power_state', name: 'Power' }, { key: 'tags.env', name: 'Env' },
  { key: 'ip_addresses', name: 'IP' },
];
const copySql = `COPY (SELECT cloud_service_id, name, provider, cloud_service_group, cloud_service_type, region_code, project_id,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), data->>'power_state', tags->>'env', array_to_string(ip_addresses, E'\\n')
  FROM cloud_service WHERE domain_id = 'd1' AND workspace_id = 'ws-1' AND state = 'ACTIVE' ORDER BY cloud_service_id)
  TO STDOUT WITH (FORMAT csv, HEADER)`;

function post(path, body) {
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

/** Reads a stream to its end, counting bytes and lines, keeping nothing. */
function count(stream) {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let lines = 0;
    stream.on('data', (c) => {
      bytes += c.length;
      for (let i = c.indexOf(10); i !== -1; i = c.indexOf(10, i + 1)) lines++;
    });
    stream.on('end', () => resolve({ bytes, lines }));
    stream.on('error', reject);
  });
}

/** Downloads a URL, counting bytes and lines. */
function drain(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (r) => {
      if (r.statusCode !== 200) return reject(new Error(`download answered ${r.statusCode}`));
      count(r).then(resolve, reject);
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

async function viaApp() {
  const started = performance.now();
  const { download_url } = await post('/inventory/v1/cloud-service/export', {
    file_format: 'CSV',
    options: [{ name: 'Cloud services', query_type: 'SEARCH', search_query: { fields, sort: [{ key: 'cloud_service_id' }] } }],
  });
  const answered = performance.now() - started;
  const got = await drain(download_url);
  return { ...got, ms: performance.now() - started, answered };
}

const rounds = Number(process.env.BENCH_ROUNDS || 5);
console.log(`export of ${rows} cloud services to CSV (${fields.length} columns), app (node ${process.env.BENCH_NODE_ARGS ?? '--max-old-space-size=128'}) vs COPY, alternating, ${rounds} rounds`);
const ratios = [];
for (let round = 1; round <= rounds; round++) {
  const c = await copy();
  const a = await viaApp();
  console.log(
    `  #${round}  COPY ${(c.ms / 1000).toFixed(2)} s (${(c.bytes / 1e6).toFixed(0)} MB, ${c.lines} lines)   app ${(a.ms / 1000).toFixed(2)} s (${(a.bytes / 1e6).toFixed(0)} MB, ` +
      `${a.lines} lines incl. header and in-cell line breaks; request answered in ${a.answered.toFixed(0)} ms)   speed app/COPY ${(c.ms / a.ms).toFixed(2)}`,
  );
  ratios.push(c.ms / a.ms);
}
const peak = await peakRssMb(app.proc.pid);
ratios.sort((a, b) => a - b);
const median = ratios[Math.floor(ratios.length / 2)];
console.log(`speed app/COPY: median ${median.toFixed(2)}, min ${ratios[0].toFixed(2)}, max ${ratios[ratios.length - 1].toFixed(2)} (target >= 1.0)`);
console.log(`app peak RSS: ${peak.toFixed(0)} MB (at start ${rssAtStart.toFixed(0)} MB) (target < 250 MB)`);
record({ measure: `CSV export speed vs COPY TO (median of ${rounds} pairs, inverse time)`, ours: median, unit: '', ratio: median, goal: '≥ 1.0×', met: median >= 1.0 });
record({ measure: 'CSV export peak RSS', ours: peak, unit: 'MB', goal: '< 250 MB', met: peak < 250 });
await app.stop();
process.exit(0);
