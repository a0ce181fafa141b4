#!/usr/bin/env node
// What tracing costs on identity's project-group/get (issue #31): three identity processes of the same
// build side by side, tracing off (no OTEL_* endpoint), on with every request sampled, and on with 10%
// sampled (parentbased_traceidratio 0.1), both exporting http/protobuf through the SDK's batch span
// processor to a local OTLP receiver (a sink on loopback, in its own process). Measured in rounds of
// alternating slices (off, 100%, 10%, then the order rotated), each server's CPU time per request from
// /proc (utime + stime of the app process, what process.cpuUsage() reports inside it); prints each
// round's ratio to off and their median.
//   npm run build && node tools/bench/identity-tracing.mjs
//   BENCH_SECONDS (per slice, 3), BENCH_ROUNDS (6), BENCH_CONCURRENCY (32), BENCH_GROUPS (1000)
//   BENCH_APP=file      another build of identity's main.js (another checkout's dist)
//   BENCH_OTLP_PROTOCOL http/protobuf (default) or http/json (the sink then counts the spans it got)
//   BENCH_TOGETHER=1    each round loads the three servers at once (concurrency split) instead of in turn:
//                       a neighbour's burst then hits all three alike (steadier ratios on a shared host)
//   BENCH_RATE=n        open loop at n requests/s per server (lib/load-rate.mjs) instead of the closed loop: the
//                       three servers then answer the same load, below saturation (a saturated closed loop counts
//                       the traced server's smaller batches per event-loop turn as tracing's cost); the
//                       concurrency is then the connections per server. Missed requests (rate too high) are shown.
//   BENCH_BASE_APP=file another build's main.js run as three more servers (base off, base 100%, base 10%) in the
//                       same rounds: each mode of this build against the same mode of that one, per round
//                       (figures then not recorded)
//   BENCH_NODE_ARGS     node options for the three servers (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof)
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { load } from './lib/load.mjs';
import { loadRate } from './lib/load-rate.mjs';
import { record } from './lib/report.mjs';
import { cpuSplit, freshDatabase, root, signingKeys, waitReady } from './lib/setup.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 3);
const rounds = Math.max(1, Number(process.env.BENCH_ROUNDS || 6));
const concurrency = Number(process.env.BENCH_CONCURRENCY || 32);
const groups = Number(process.env.BENCH_GROUPS || 1000);
const protocol = process.env.BENCH_OTLP_PROTOCOL || 'http/protobuf';
const together = process.env.BENCH_TOGETHER === '1';
const rate = Number(process.env.BENCH_RATE || 0);
const nodeArgs = (process.env.BENCH_NODE_ARGS || '').split(' ').filter(Boolean);

const dbUrl = await freshDatabase('identity', 'bench_identity_tracing');
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

// The OTLP receiver: answers every export 200 at once; counts bytes (and spans, for http/json).
const sinkPort = 18490;
const sinkSource = `
  let bytes = 0, spans = 0, exports = 0;
  require('node:http').createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => { bytes += c.length; if (req.headers['content-type']?.startsWith('application/json')) chunks.push(c); });
    req.on('end', () => {
      exports++;
      if (chunks.length) for (const r of JSON.parse(Buffer.concat(chunks)).resourceSpans ?? []) for (const s of r.scopeSpans ?? []) spans += (s.spans ?? []).length;
      res.writeHead(200, { 'content-type': req.headers['content-type'] || 'application/x-protobuf' }).end();
    });
  }).listen(${sinkPort}, '127.0.0.1');
  process.on('SIGTERM', () => { process.stdout.write(JSON.stringify({ bytes, spans, exports })); process.exit(0); });`;
const sink = spawn(process.execPath, ['-e', sinkSource], { stdio: ['ignore', 'pipe', 'inherit'] });
let sinkOut = '';
sink.stdout.on('data', (d) => (sinkOut += d));

const otlp = {
  OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  // Room for a second of spans at full speed, so that every sampled span is exported, none dropped.
  OTEL_BSP_MAX_QUEUE_SIZE: '16384',
};
const modes = [
  { label: 'off', port: 18121, env: {} },
  { label: 'on 100%', port: 18122, env: { ...otlp, OTEL_TRACES_SAMPLER: 'parentbased_always_on' } },
  { label: 'on 10%', port: 18123, env: { ...otlp, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.1' } },
];
const ours = [...modes];
const baseApp = process.env.BENCH_BASE_APP;
// Interleaved (off, base off, 100%, base 100% ...): started, warmed and loaded in that order, so that neither
// build is always the first three (those paid 1.15-1.8x in both orientations when they were).
if (baseApp) modes.splice(0, modes.length, ...ours.flatMap((m, i) => [m, { ...m, label: m.label.replace(/^(on )?/, 'base '), port: 18124 + i, app: path.resolve(baseApp), of: m }]));
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
for (const m of modes) {
  m.child = spawn(process.execPath, [...nodeArgs, m.app ?? (process.env.BENCH_APP || path.join(root, 'dist/apps/identity/main.js'))], {
    env: {
      ...clean, ...m.env, PORT: String(m.port), DATABASE_URL: dbUrl, BOOTSTRAP_DOMAIN_ID: 'd1', BOOTSTRAP_PASSWORD: 'bench-password',
      JWT_PRIVATE_KEY: keys.privatePem, JWT_PUBLIC_KEY: keys.publicPem, LOG_LEVEL: process.env.LOG_LEVEL || 'info',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  m.slices = [];
}
process.on('exit', () => [sink, ...modes.map((m) => m.child)].forEach((c) => c.kill('SIGTERM')));
for (const m of modes) await waitReady(m.port, `identity (${m.label})`);

const body = (i) => ({ project_group_id: `pg-${String(((i * 7919) % groups) + 1).padStart(12, '0')}` });
const run = async (m, durationMs, c = concurrency) => {
  const target = { url: `http://127.0.0.1:${m.port}/identity/v2/project-group/get`, body, headers: { authorization: `Bearer ${token}` }, durationMs };
  const res = rate > 0 ? await loadRate({ ...target, rate, connections: concurrency }) : await load({ ...target, concurrency: c });
  m.answered = (m.answered ?? 0) + res.requests;
  m.missed = (m.missed ?? 0) + (res.missed ?? 0);
  return res;
};
for (const m of modes) await run(m, 5000); // warm-up (JIT, pools, the exporter's first batches)

const loadText = rate > 0 ? `open loop at ${rate} requests/s per server on ${concurrency} connections` : `concurrency ${concurrency}`;
console.log(`project-group/get, ${groups} groups, ${loadText}, ${rounds} rounds of ${seconds} s ${together ? 'with the three servers loaded together' : 'slices in turn'}, export ${protocol}`);
let errors = 0;
for (let r = 0; r < rounds; r++) {
  const slice = (m, cpu0, res) => {
    const cpu1 = cpuSplit(m.child.pid);
    errors += res.errors;
    m.slices.push({ cpuUs: ((cpu1.user - cpu0.user + cpu1.system - cpu0.system) * 1e6) / res.requests, rps: res.rps, requests: res.requests });
  };
  if (together) {
    const cpu0 = modes.map((m) => cpuSplit(m.child.pid));
    const res = await Promise.all(modes.map((m) => run(m, seconds * 1000, Math.max(1, Math.round(concurrency / modes.length)))));
    modes.forEach((m, i) => slice(m, cpu0[i], res[i]));
  } else {
    for (const m of modes.map((_, i) => modes[(i + r) % modes.length])) {
      const cpu0 = cpuSplit(m.child.pid);
      slice(m, cpu0, await run(m, seconds * 1000));
    }
  }
  console.log(`round ${r + 1}: ${modes.map((m) => `${m.label} ${m.slices[r].cpuUs.toFixed(0)} µs`).join(', ')}`);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const [off, ...on] = ours;
const offUs = median(off.slices.map((s) => s.cpuUs));
console.log(`\n${'mode'.padEnd(9)} CPU per request (median of ${rounds})  ratio to off (median of the rounds' ratios)  req/s (median)`);
console.log(`${off.label.padEnd(9)} ${offUs.toFixed(0).padStart(6)} µs${' '.repeat(28)}1.00${' '.repeat(44)}${median(off.slices.map((s) => s.rps)).toFixed(0)}`);
const goals = { 'on 100%': 1.3, 'on 10%': 1.1 };
for (const m of on) {
  const us = median(m.slices.map((s) => s.cpuUs));
  const ratio = median(m.slices.map((s, i) => s.cpuUs / off.slices[i].cpuUs));
  console.log(`${m.label.padEnd(9)} ${us.toFixed(0).padStart(6)} µs${' '.repeat(28)}${ratio.toFixed(2)} (goal ≤ ${goals[m.label]})${' '.repeat(30)}${median(m.slices.map((s) => s.rps)).toFixed(0)}`);
  if (!baseApp) record({ measure: `project-group/get: server CPU per request, tracing ${m.label} vs off`, ours: us, baseline: offUs, unit: 'µs', ratio, goal: `≤ ${goals[m.label]}×`, met: ratio <= goals[m.label] });
}
if (baseApp) {
  const bases = modes.filter((m) => m.of);
  const [baseOff, ...baseOn] = bases;
  for (const m of baseOn) {
    const ratio = median(m.slices.map((s, i) => s.cpuUs / baseOff.slices[i].cpuUs));
    console.log(`${m.label.padEnd(9)} ${median(m.slices.map((s) => s.cpuUs)).toFixed(0).padStart(6)} µs${' '.repeat(28)}${ratio.toFixed(2)} (to base off)`);
  }
  console.log(`\nthis build / base build, CPU per request in the same rounds (per round; median):`);
  for (const m of bases) {
    const r = m.slices.map((s, i) => m.of.slices[i].cpuUs / s.cpuUs);
    console.log(`  ${m.of.label.padEnd(9)} ${r.map((x) => x.toFixed(2)).join(' ')}; median ${median(r).toFixed(2)}`);
  }
}

for (const m of modes) {
  m.child.kill('SIGTERM');
  await new Promise((r) => m.child.on('exit', r));
}
sink.kill('SIGTERM');
await new Promise((r) => sink.on('exit', r));
const got = JSON.parse(sinkOut || '{}');
const answered = modes.filter((m) => m !== off).map((m) => `${m.label} ${m.answered}`).join(', ') + (rate > 0 ? `; missed (rate above capacity): ${modes.map((m) => `${m.label} ${m.missed}`).join(', ')}` : '');
console.log(`OTLP receiver: ${got.exports} exports, ${(got.bytes / 1e6).toFixed(1)} MB${protocol === 'http/json' ? `, ${got.spans} spans` : ''}; requests answered (warm-up included): ${answered}`);
process.exit(errors ? 1 : 0);
