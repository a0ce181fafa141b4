#!/usr/bin/env node
// Benchmark of unary plugin calls (Event.parse, as the webhook worker makes one per delivery): the
// client's CPU per call (process.cpuUsage of the calling process, which does nothing else) and the
// plugin's (libs/plugin-kit in its own process, /proc/<pid>/stat), calls/s at a given concurrency.
// With BENCH_BASE_ROOT=<another checkout> its libs/plugin is bundled too and both clients call the
// same plugin in alternating slices (base, new, base, new...): the figure is the median of the
// slices' ratios, which the machine's load moves far less than a wall-clock rate.
//
//   node tools/bench/plugin/unary.mjs                                    # this checkout's client only
//   BENCH_BASE_ROOT=/work/base node tools/bench/plugin/unary.mjs         # A/B against another checkout
//
// Env: BENCH_CALLS (calls a slice, 4000), BENCH_CONCURRENCY (32), BENCH_RUNS (slices of each, 5).
import { fork } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundle } from '../../build/bundle.mjs';
import { cpuSeconds } from '../lib/setup.mjs';
import { record } from '../lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../../..');
const CALLS = Number(process.env.BENCH_CALLS || 4000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 32);
const RUNS = Number(process.env.BENCH_RUNS || 5);
const BASE_ROOT = process.env.BENCH_BASE_ROOT;
const entry = path.join(ROOT, 'tmp/bench-plugin/unary-plugin.cjs');

/** An Alertmanager delivery, as a webhook receives it. */
const payload = (i) => ({
  version: '4',
  status: 'firing',
  receiver: 'platform',
  groupLabels: { alertname: 'HighLoad' },
  commonLabels: { alertname: 'HighLoad', severity: 'warning' },
  externalURL: 'http://alertmanager:9093',
  alerts: [
    {
      status: 'firing',
      labels: { alertname: 'HighLoad', instance: `node-${i % 1000}:9100`, severity: 'warning' },
      annotations: { summary: `High load on node-${i % 1000}`, description: 'load15 > 4 for 10m' },
      startsAt: '2026-11-27T00:00:00Z',
      endsAt: '0001-01-01T00:00:00Z',
      fingerprint: `fp-${i % 1000}`,
    },
  ],
});

if (process.argv[2] === 'serve') {
  const { serveMonitoringWebhook } = createRequire(import.meta.url)(entry);
  const server = await serveMonitoringWebhook({
    init: () => ({ metadata: {} }),
    parse: (req) => ({
      results: req.data.alerts.map((a) => ({
        event_key: a.fingerprint,
        event_type: 'ALERT',
        title: a.annotations.summary,
        description: a.annotations.description,
        severity: 'WARNING',
        rule: a.labels.alertname,
        resource: { name: a.labels.instance },
        occurred_at: a.startsAt,
        additional_info: a.labels,
        provider: 'prometheus',
      })),
    }),
  });
  process.send({ endpoint: server.endpoint });
  process.on('message', async () => {
    await server.stop(1000);
    process.exit(0);
  });
} else {
  await bundle({ entryPoints: [path.join(here, 'unary-entry.ts')], outfile: entry });
  const sides = [{ name: 'this checkout', file: path.join(ROOT, 'tmp/bench-plugin/unary-client.cjs'), bundler: bundle, root: ROOT }];
  if (BASE_ROOT) {
    const { bundle: baseBundle } = await import(path.join(path.resolve(BASE_ROOT), 'tools/build/bundle.mjs'));
    sides.unshift({ name: `base (${BASE_ROOT})`, file: path.join(ROOT, 'tmp/bench-plugin/unary-client-base.cjs'), bundler: baseBundle, root: path.resolve(BASE_ROOT) });
  }
  for (const s of sides) {
    await s.bundler({ stdin: { contents: "export { PluginClients, pluginClientConfigFromEnv } from '@platform/plugin';", resolveDir: s.root, loader: 'ts' }, outfile: s.file });
    const { PluginClients, pluginClientConfigFromEnv } = createRequire(import.meta.url)(s.file);
    s.clients = new PluginClients(pluginClientConfigFromEnv());
  }
  const child = fork(fileURLToPath(import.meta.url), ['serve'], { stdio: 'inherit' });
  process.on('exit', () => child.kill());
  const { endpoint } = await new Promise((resolve) => child.once('message', resolve));

  /** One slice: CALLS calls, CONCURRENCY at a time; the client's and the plugin's CPU per call (µs), calls/s. */
  async function slice(s) {
    const client = s.clients.monitoring(endpoint, 'plugin-bench').event;
    let next = 0;
    const cpu0 = process.cpuUsage();
    const plugin0 = cpuSeconds(child.pid);
    const t0 = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < CALLS) {
          const i = next++;
          const answer = await client.parse({ options: {}, data: payload(i) });
          if (answer.results[0]?.event_key !== `fp-${i % 1000}`) throw new Error(`wrong answer to call ${i}`);
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(cpu0);
    return { clientUs: (cpu.user + cpu.system) / CALLS, pluginUs: ((cpuSeconds(child.pid) - plugin0) * 1e6) / CALLS, rate: CALLS / seconds };
  }

  for (const s of sides) await slice(s); // warm-up (connections, JIT)
  const results = sides.map(() => []);
  const load = () => (process.platform === 'linux' ? createRequire(import.meta.url)('node:os').loadavg()[0].toFixed(1) : '?');
  console.log(`unary Event.parse calls, ${CALLS} a slice, ${CONCURRENCY} in flight, ${RUNS} slices each, load average ${load()}`);
  for (let r = 0; r < RUNS; r++) {
    for (let k = 0; k < sides.length; k++) {
      const x = await slice(sides[k]);
      results[k].push(x);
      console.log(`  ${sides[k].name.padEnd(28)} client ${x.clientUs.toFixed(1).padStart(6)} µs/call, plugin ${x.pluginUs.toFixed(1).padStart(6)} µs/call, ${x.rate.toFixed(0).padStart(6)} calls/s`);
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ours = results[results.length - 1];
  console.log(`\nthis checkout: client ${median(ours.map((x) => x.clientUs)).toFixed(1)} µs/call, plugin ${median(ours.map((x) => x.pluginUs)).toFixed(1)} µs/call, ${median(ours.map((x) => x.rate)).toFixed(0)} calls/s (load average ${load()})`);
  if (sides.length === 2) {
    const ratio = (f) => median(ours.map((x, i) => f(x) / f(results[0][i])));
    console.log(`against the base, median of the slices' ratios: client CPU per call ${ratio((x) => x.clientUs).toFixed(2)}×, plugin CPU per call ${ratio((x) => x.pluginUs).toFixed(2)}×, calls/s ${ratio((x) => x.rate).toFixed(2)}×`);
    record({ measure: `unary plugin call (Event.parse, ${CONCURRENCY} in flight): client CPU per call`, ours: median(ours.map((x) => x.clientUs)), baseline: median(results[0].map((x) => x.clientUs)), unit: 'µs' });
  }
  for (const s of sides) s.clients.close();
  child.send('stop');
  await new Promise((r) => child.once('exit', r));
  process.exit(0);
}
