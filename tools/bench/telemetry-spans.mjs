#!/usr/bin/env node
// The CPU of a sampled request's own spans and their export, in a loop (issue #31, third round):
// libs/telemetry bundled as the apps bundle it, started with every request sampled and exporting
// http/protobuf to an OTLP sink on loopback (its own process); each iteration is what identity's
// project-group get makes: a root request's server span, one SQL client span under it, both ended.
// The loop yields to the event loop every 64 iterations (the exporter's sockets and timers run then),
// and the CPU of the whole process (process.cpuUsage: the spans, the buffer, the serializer, the HTTP
// export) is divided by the iterations, a final flush included. Not affected by the host's load as
// wall-clock figures are (CPU time of one process), though a loaded host still stretches it a little.
//   node tools/bench/telemetry-spans.mjs
//   BENCH_BASE_LIB=<other checkout>/libs/telemetry/src/index.ts   A/B: alternating runs, ratio new/base
//   BENCH_ITERATIONS (100000), BENCH_RUNS (5 per side); BENCH_CPU_PROF=<dir>: each run writes a --cpu-prof there
//   BENCH_AWAITS=n      each request is async: n awaits inside its span (the request path's promises, which an
//                       enabled AsyncLocalStorage's promise hooks pay for), then its SQL span across a setImmediate
//                       (the statement's I/O); BENCH_CONCURRENCY requests in flight (1)
//   BENCH_RATIO=r       the share of requests sampled (parentbased_traceidratio r; every request by default)
//   BENCH_OFF=1         one more side: the same loop with tracing off (no endpoint), for the ratio to off
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { root } from './lib/setup.mjs';

const iterations = Number(process.env.BENCH_ITERATIONS || 100_000);
const runs = Number(process.env.BENCH_RUNS || 5);
const dir = mkdtempSync(path.join(os.tmpdir(), 'telemetry-bench-'));
const bundle = (entry, name) => {
  const outfile = path.join(dir, `${name}.js`);
  buildSync({ entryPoints: [entry], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile, packages: 'external', logLevel: 'error' });
  return outfile;
};
const awaits = Number(process.env.BENCH_AWAITS || 0);
const inFlight = Math.max(1, Number(process.env.BENCH_CONCURRENCY || 1));
const sides = [{ label: 'this checkout', file: bundle(path.join(root, 'libs/telemetry/src/index.ts'), 'new'), us: [] }];
if (process.env.BENCH_BASE_LIB) sides.unshift({ label: 'base', file: bundle(process.env.BENCH_BASE_LIB, 'base'), us: [] });
if (process.env.BENCH_OFF === '1') sides.unshift({ label: 'off', file: sides[sides.length - 1].file, us: [], off: true });

const sinkPort = 18495;
const sink = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); }).listen(${sinkPort}, '127.0.0.1')`], { stdio: 'ignore' });
process.on('exit', () => sink.kill('SIGTERM'));
await new Promise((r) => setTimeout(r, 300));

const script = (file) => `
  const t = require(${JSON.stringify(file)});
  t.startTelemetry('bench');
  const req = { headers: { host: 'x', 'content-type': 'application/json', authorization: 'Bearer x' } };
  const attrs = (text) => ({ 'db.system.name': 'postgresql', 'db.query.text': text, 'db.namespace': 'identity' });
  const one = () => {
    const rs = t.startRequestSpan(req, 'POST', '/identity/v2/project-group/get');
    t.inRequestSpan(rs, () => {
      const c = t.startClientSpan('SELECT identity', attrs('SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2'));
      if (c) t.endSpan(c);
    });
    t.endRequestSpan(rs, 'POST', '/identity/v2/project-group/get', 200);
  };
  const oneAsync = async () => {
    const rs = t.startRequestSpan(req, 'POST', '/identity/v2/project-group/get');
    const work = async () => {
      for (let k = 0; k < ${awaits}; k++) await Promise.resolve(k);
      const c = t.startClientSpan('SELECT identity', attrs('SELECT * FROM project_group WHERE domain_id = $1 AND project_group_id = $2'));
      await new Promise((r) => setImmediate(r));
      if (c) t.endSpan(c);
    };
    await (rs ? t.inRequestSpan(rs, work) : work());
    if (rs) t.endRequestSpan(rs, 'POST', '/identity/v2/project-group/get', 200);
  };
  const loop = ${awaits > 0}
    ? async (n) => { let i = 0; await Promise.all(Array.from({ length: ${inFlight} }, async () => { while (i++ < n) await oneAsync(); })); }
    : async (n) => { for (let i = 0; i < n; i++) { one(); if ((i & 63) === 63) await new Promise((r) => setImmediate(r)); } };
  (async () => {
    await loop(20000); // warm-up: JIT, the exporter's first batches
    await new Promise((r) => setTimeout(r, 200));
    const c0 = process.cpuUsage();
    await loop(${iterations});
    await t.shutdownTelemetry(30000);
    const c = process.cpuUsage(c0);
    process.stdout.write(String((c.user + c.system) / ${iterations}));
    process.exit(0);
  })();`;
const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
const ratio = process.env.BENCH_RATIO;
const env = {
  ...clean, NODE_PATH: path.join(root, 'node_modules'), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sinkPort}`,
  ...(ratio ? { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: ratio } : { OTEL_TRACES_SAMPLER: 'parentbased_always_on' }),
  OTEL_BSP_MAX_QUEUE_SIZE: '16384',
};
const offEnv = { ...clean, NODE_PATH: path.join(root, 'node_modules') };
const once = (file, off) =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []), '-e', script(file)], { cwd: root, env: off ? offEnv : env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`exit ${code}`))));
  });

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const shape = awaits > 0 ? `${awaits} awaits and a setImmediate each, ${inFlight} in flight` : 'synchronous';
console.log(`${iterations} requests (server span + one SQL span), ${ratio ? `${ratio} of them` : 'all'} sampled, ${shape}, http/protobuf export; load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
for (let r = 0; r < runs; r++) {
  for (const s of r % 2 ? [...sides].reverse() : sides) s.us.push(await once(s.file, s.off));
  console.log(`run ${r + 1}: ${sides.map((s) => `${s.label} ${s.us[r].toFixed(2)} µs`).join(', ')}`);
}
for (const s of sides) console.log(`${s.label.padEnd(14)} ${median(s.us).toFixed(2)} µs per request (median of ${runs})`);
const last = sides[sides.length - 1];
for (const s of sides.slice(0, -1)) console.log(`ratio this checkout / ${s.label}, per run: ${last.us.map((u, i) => (u / s.us[i]).toFixed(2)).join(' ')}; median ${median(last.us.map((u, i) => u / s.us[i])).toFixed(2)}`);
if (sides[0].off && sides.length === 3) console.log(`ratio base / off, per run: ${sides[1].us.map((u, i) => (u / sides[0].us[i]).toFixed(2)).join(' ')}; median ${median(sides[1].us.map((u, i) => u / sides[0].us[i])).toFixed(2)}`);
console.log(`load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
sink.kill('SIGTERM');
process.exit(0);
