#!/usr/bin/env node
// cloud-service/list with a filter, a sort and a page on BENCH_ROWS cloud services (default 1M), through
// the inventory app (token, zod, project-group/state scoping, the query DSL compiler, JSON shaping) against
// a minimal node:http + pg server running the same query written by hand, same concurrency, one run each.
//   node tools/build/build-app.mjs inventory && node tools/bench/inventory/list.mjs
//   (BENCH_ROWS, BENCH_SECONDS per run, BENCH_ROUNDS, BENCH_CONCURRENCY, BENCH_FILTER=columns,json)      target: app latency <= 1.3x hand-written SQL
import http from 'node:http';
import pg from 'pg';
import { load } from '../lib/load.mjs';
import { dbUrl, ensureData, rows, startApp, token } from './lib/setup.mjs';
import { record } from '../lib/report.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 10);
// `columns`: provider + group + region (typed columns); `json`: provider + group + data.power_state.
const variants = (process.env.BENCH_FILTER || 'columns,json').split(',');
const concurrency = Number(process.env.BENCH_CONCURRENCY || 8);
const rounds = Number(process.env.BENCH_ROUNDS || 3);

await ensureData();
const app = await startApp(18106);

// Same rows, same order, same page: EC2-like records of one provider and group that are running,
// newest first, 50 per page over the first 20 pages.
const filterOf = (i) => ({
  provider: ['aws', 'google_cloud', 'azure'][i % 3],
  group: `Group${i % 4}`,
  start: 1 + 50 * (i % 20),
});
let variant = variants[0];
const appBody = (i) => {
  const f = filterOf(i);
  const cond = variant === 'json' ? { k: 'data.power_state', v: 'RUNNING', o: 'eq' } : { k: 'region_code', v: ['region-1', 'region-2', 'region-3', 'region-5', 'region-8'], o: 'in' };
  return {
    provider: f.provider,
    cloud_service_group: f.group,
    query: { filter: [cond], sort: [{ key: 'created_at', desc: true }], page: { start: f.start, limit: 50 } },
  };
};

const iso = (d) => (d ? d.toISOString() : '');
const pool = new pg.Pool({ connectionString: dbUrl, max: 10 });
const raw = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', async () => {
    const b = JSON.parse(body);
    const cond = b.query.filter[0];
    const where = `domain_id = $1 AND workspace_id = $2 AND state = 'ACTIVE' AND provider = $3 AND cloud_service_group = $4 AND ${
      cond.k === 'region_code' ? 'region_code = ANY($5)' : "data->>'power_state' = $5"
    }`;
    const args = ['d1', 'ws-1', b.provider, b.cloud_service_group, cond.v];
    const { rows: found } = await pool.query(
      `SELECT (SELECT count(*) FROM cloud_service WHERE ${where})::int AS total_count, p.*
       FROM (SELECT * FROM cloud_service WHERE ${where} ORDER BY created_at DESC, cloud_service_id LIMIT 50 OFFSET $6) p`,
      [...args, b.query.page.start - 1],
    );
    const results = found.map(({ total_count: _t, ...r }) => ({
      ...r, launched_at: iso(r.launched_at), created_at: iso(r.created_at), updated_at: iso(r.updated_at), deleted_at: iso(r.deleted_at),
    }));
    const out = JSON.stringify({ results, total_count: found[0]?.total_count ?? 0 });
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
    res.end(out);
  });
});
await new Promise((r) => raw.listen(18199, '127.0.0.1', r));

const fetchJson = (url, body, headers = {}) =>
  new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (r) => {
      let s = '';
      r.on('data', (c) => (s += c));
      r.on('end', () => (r.statusCode === 200 ? resolve(JSON.parse(s)) : reject(new Error(`${r.statusCode} ${s}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
const run = async (label, url, headers) => {
  await load({ url, body: appBody, headers, concurrency, durationMs: 2000 }); // warm-up
  const r = await load({ url, body: appBody, headers, concurrency, durationMs: seconds * 1000 });
  console.log(`  ${label.padEnd(13)} ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors)`);
  return r;
};
let errors = 0;
for (variant of variants) {
  // The two must answer the same thing.
  const a0 = await fetchJson(`${app.url}/inventory/v1/cloud-service/list`, appBody(5), { authorization: `Bearer ${token}` });
  const r0 = await fetchJson('http://127.0.0.1:18199/list', appBody(5));
  const idsOf = (x) => x.results.map((r) => r.cloud_service_id).join(',');
  if (idsOf(a0) !== idsOf(r0) || a0.total_count !== r0.total_count || a0.results.length !== 50) {
    throw new Error(`app and hand-written SQL disagree: ${a0.total_count}/${r0.total_count}`);
  }
  const what = variant === 'json' ? 'provider + group + data.power_state' : 'provider + group + region_code in [5]';
  console.log(`cloud-service/list on ${rows} rows, filter ${what}, sort created_at desc, page of 50 (${a0.total_count} matches), concurrency ${concurrency}, ${seconds} s each`);
  // Alternate the two, round after round: the machine is shared, so one long run each would measure its neighbours.
  const ratios = [];
  for (let round = 1; round <= rounds; round++) {
    const sql = await run(`raw SQL #${round}`, 'http://127.0.0.1:18199/list', {});
    const inv = await run(`inventory #${round}`, `${app.url}/inventory/v1/cloud-service/list`, { authorization: `Bearer ${token}` });
    ratios.push({ p50: inv.p50 / sql.p50, rps: sql.rps / inv.rps });
    errors += sql.errors + inv.errors;
  }
  const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const p50 = median(ratios.map((r) => r.p50));
  console.log(`  median ratio inventory/raw over ${rounds} rounds: p50 latency ${p50.toFixed(2)}, throughput ${median(ratios.map((r) => r.rps)).toFixed(2)}  (target <= 1.3)`);
  record({ measure: `cloud-service/list, filter ${what}: p50 latency vs raw SQL server (median of ${rounds})`, ours: p50, ratio: p50, goal: '≤ 1.3×', met: p50 <= 1.3 });
}

await app.stop();
raw.close();
await pool.end();
process.exit(errors ? 1 : 0);
