#!/usr/bin/env node
// Webhook ingestion through a published plugin against the built-in: the same Alertmanager payloads
// POSTed to a webhook of `plugin-prometheus-mon-webhook`, parsed once by the built-in in the worker
// and once by a TypeScript gRPC plugin (libs/plugin-kit, its own process, the built-in's parser
// behind Event.parse) published under that id for the domain. The built monitoring app and worker
// (dist/apps/monitoring) run fresh for each run; events/s from accepted to stored. Target: the plugin
// ≥ 0.7× the built-in's events/s. Loopback only, bounded in time.
//   node tools/build/build-app.mjs monitoring && node tools/bench/monitoring/plugin-ingest.mjs
//   (BENCH_SECONDS=15, BENCH_CONCURRENCY=32, BENCH_KEYS=1000, BENCH_RUNS=2 alternating runs of each, median;
//   BENCH_DIST=<another dist/apps/monitoring> runs that build instead; BENCH_ONLY=plugin its runs alone;
//   BENCH_PLUGIN_BUNDLE=<another checkout's tmp/bench-monitoring-plugin/plugin.cjs> runs its plugin (its kit);
//   BENCH_NODE_ARGS / BENCH_PLUGIN_NODE_ARGS: node flags of the worker / the plugin, e.g. --cpu-prof).
//   Prints each process's CPU per event (app, worker, plugin, the Postgres backends, Redis, this load
//   generator) and the machine's busy share: whether a path is bound by CPU or by waiting.
import { fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Redis from 'ioredis';
import { bundle } from '../../build/bundle.mjs';
import { loadRaw } from '../lib/load.mjs';
import { record } from '../lib/report.mjs';
import { busyShare, machineTicks, pgBackends, pgCpu, redisCpu, selfCpu } from '../lib/cpu-breakdown.mjs';
import { cpuSeconds, freshDatabase, root, signingKeys, waitReady } from '../lib/setup.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
// BENCH_PLUGIN_BUNDLE: a plugin.cjs bundled from another checkout (its kit), used as it is.
const entry = process.env.BENCH_PLUGIN_BUNDLE ? path.resolve(process.env.BENCH_PLUGIN_BUNDLE) : path.join(root, 'tmp/bench-monitoring-plugin/plugin.cjs');
const PLUGIN_ID = 'plugin-prometheus-mon-webhook';

if (process.argv[2] === 'serve') {
  // The plugin's process: the built-in's parser behind Event.parse.
  const { serveMonitoringWebhook, prometheusWebhook } = createRequire(import.meta.url)(entry);
  const server = await serveMonitoringWebhook({
    init: () => ({ metadata: {} }),
    parse: async (req) => {
      const { events } = await prometheusWebhook.parse(req.options, req.data, {});
      return { results: events.map((e) => ({ ...e, occurred_at: e.occurred_at ? new Date(e.occurred_at).toISOString() : '' })) };
    },
  });
  process.send({ endpoint: server.endpoint });
  process.on('message', async () => {
    await server.stop(1000);
    process.exit(0);
  });
} else {
  const seconds = Number(process.env.BENCH_SECONDS || 15);
  const concurrency = Number(process.env.BENCH_CONCURRENCY || 32);
  const keys = Number(process.env.BENCH_KEYS || 1000);
  const runs = Number(process.env.BENCH_RUNS || 2);
  const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
  const port = 18106;
  if (!process.env.BENCH_PLUGIN_BUNDLE) await bundle({ entryPoints: [path.join(here, 'plugin-entry.ts')], outfile: entry });
  const pluginDbUrl = await freshDatabase('plugin', 'bench_plugin');
  const pluginDb = new pg.Pool({ connectionString: pluginDbUrl, max: 1 });
  // BENCH_PLUGIN_NODE_ARGS: node flags of the plugin's process (e.g. --cpu-prof ..., written when it stops).
  const pluginArgs = (process.env.BENCH_PLUGIN_NODE_ARGS || '').split(/\s+/).filter(Boolean);
  const plugin = fork(fileURLToPath(import.meta.url), ['serve'], { stdio: 'inherit', execArgv: [...process.execArgv, ...pluginArgs] });
  const { endpoint } = await new Promise((resolve) => plugin.once('message', resolve));
  process.on('exit', () => plugin.kill()); // a failed run must not leave the plugin's process behind
  const keysPair = signingKeys();
  const redisInfo = new Redis(redisUrl); // INFO cpu, for Redis's share
  const samples = []; // each run's events/s and CPU per event by process

  const alert = (i) => ({
    version: '4',
    groupKey: `{}:{alertname="HighLoad"}`,
    status: 'firing',
    receiver: 'platform',
    groupLabels: { alertname: 'HighLoad' },
    commonLabels: { alertname: 'HighLoad', severity: 'warning' },
    commonAnnotations: {},
    externalURL: 'http://alertmanager:9093',
    alerts: [
      {
        status: 'firing',
        labels: { alertname: 'HighLoad', instance: `node-${i % keys}:9100`, severity: 'warning' },
        annotations: { summary: `High load on node-${i % keys}`, description: 'load15 > 4 for 10m' },
        startsAt: new Date().toISOString(),
        endsAt: '0001-01-01T00:00:00Z',
        generatorURL: 'http://prometheus:9090/graph?g0.expr=node_load15+%3E+4',
        fingerprint: `fp-${(i % keys).toString(16).padStart(12, '0')}`,
      },
    ],
  });

  /** One run: a fresh database and processes; `published` puts the plugin under the built-in's id for d1. */
  async function run(published) {
    await pluginDb.query('DELETE FROM installed_plugin');
    await pluginDb.query('DELETE FROM supervisor');
    if (published) {
      await pluginDb.query(`INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ('d1', 'sup-bench', 'bench', 'bench', 'x')`);
      await pluginDb.query(
        `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint, plugin_key)
         VALUES ('sup-bench', 'd1', 'bench', 'bench', $1, '2.0.0', 'ACTIVE', $2, 'sup-bench ' || $1 || ' 2.0.0')`,
        [PLUGIN_ID, endpoint],
      );
    }
    const dbName = 'bench_monitoring_plugin';
    const dbUrl = await freshDatabase('monitoring', dbName);
    const db = new pg.Pool({ connectionString: dbUrl, max: 2 });
    const accessKey = randomBytes(24).toString('base64url');
    const webhookId = 'webhook-bench00000002';
    await db.query(
      `INSERT INTO webhook (domain_id, webhook_id, workspace_id, project_id, name, access_key, webhook_url, plugin_info)
       VALUES ('d1', $1, 'ws-1', 'project-1', 'bench', $2, '', $3)`,
      [webhookId, accessKey, JSON.stringify({ plugin_id: PLUGIN_ID, version: published ? '2.0.0' : '1.1.0', options: {}, metadata: {}, upgrade_mode: 'AUTO' })],
    );
    const queuePrefix = `bench-monitoring-plugin-${randomBytes(4).toString('hex')}`;
    const env = {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: dbUrl,
      PLUGIN_DATABASE_URL: pluginDbUrl,
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: queuePrefix,
      JWT_PUBLIC_KEY: keysPair.publicPem,
      LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    };
    // BENCH_DIST: another build of the app (e.g. a base checkout's dist/apps/monitoring) for A/B runs.
    const dist = path.resolve(root, process.env.BENCH_DIST || 'dist/apps/monitoring');
    // BENCH_NODE_ARGS: node flags of the worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" (written when it exits).
    const nodeArgs = (e) => (e === 'worker' ? (process.env.BENCH_NODE_ARGS || '').split(/\s+/).filter(Boolean) : []);
    const children = ['main', 'worker'].map((e) => spawn(process.execPath, [...nodeArgs(e), path.join(dist, `${e}.js`)], { env, stdio: ['ignore', 'ignore', 'inherit'] }));
    const kill = () => children.forEach((c) => c.kill('SIGTERM'));
    process.on('exit', kill);
    try {
      await waitReady(port, 'monitoring');
      const stored = async () => Number((await db.query(`SELECT count(*) FROM webhook_delivery WHERE outcome = 'STORED'`)).rows[0].count);
      const url = `http://127.0.0.1:${port}/monitoring/v1/webhook/${webhookId}/${accessKey}/events`;
      const w = await loadRaw({ url, body: alert, concurrency, durationMs: 2000, variants: keys }); // warm-up (also stored)
      for (let i = 0; i < 300 && (await stored()) < w.requests - w.errors; i++) await new Promise((res) => setTimeout(res, 100));
      const warm = await stored();
      const pids = await pgBackends(db, [dbName, 'bench_plugin']); // the app's and the worker's pools are open by now
      const cpu = async () => ({ app: cpuSeconds(children[0].pid), worker: cpuSeconds(children[1].pid), plugin: published ? cpuSeconds(plugin.pid) : 0, postgres: pgCpu(pids), redis: await redisCpu(redisInfo), load: selfCpu() });
      const cpu0 = await cpu();
      const ticks0 = machineTicks();
      const t0 = Date.now();
      const r = await loadRaw({ url, body: alert, concurrency, durationMs: seconds * 1000, variants: keys });
      const accepted = r.requests - r.errors;
      const deadline = Date.now() + 120_000;
      let done = (await stored()) - warm;
      while (done < accepted && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 100));
        done = (await stored()) - warm;
      }
      const t1 = Date.now();
      const cpu1 = await cpu();
      const busy = busyShare(ticks0, machineTicks());
      const errors = Number((await db.query(`SELECT count(*) FROM webhook_delivery WHERE outcome <> 'STORED'`)).rows[0].count);
      const rate = done / ((t1 - t0) / 1000);
      const per = Object.fromEntries(Object.keys(cpu0).map((k) => [k, ((cpu1[k] - cpu0[k]) * 1000) / done]));
      const total = Object.values(per).reduce((a, b) => a + b, 0);
      console.log(
        `${published ? 'gRPC plugin' : 'built-in   '}  ${rate.toFixed(0).padStart(6)} events/s end to end (${done} of ${accepted} stored, ${errors} not STORED), accept p99 ${r.p99.toFixed(1)} ms\n` +
          `             CPU per event (ms): ${Object.entries(per).filter(([k]) => published || k !== 'plugin').map(([k, v]) => `${k} ${v.toFixed(3)}`).join(', ')}; all ${total.toFixed(3)}` +
          ` = ${((total * rate) / 1000).toFixed(2)} cores at this rate; machine ${(busy * 100).toFixed(0)}% busy (of ${os.availableParallelism()} cores, other sessions too)`,
      );
      samples.push({ published, rate, per });
      if (errors || done < accepted) throw new Error('not every accepted delivery was stored as events');
      return rate;
    } finally {
      kill();
      process.off('exit', kill);
      await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((res) => c.once('exit', res)) : undefined)));
      const redis = new Redis(redisUrl);
      let cursor = '0';
      do {
        const [next, found] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
        if (found.length) await redis.del(...found);
        cursor = next;
      } while (cursor !== '0');
      redis.disconnect();
      await db.end();
    }
  }

  const builtin = [];
  const remote = [];
  console.log(`webhook ingestion, Alertmanager payloads (${keys} distinct alerts), concurrency ${concurrency}, ${seconds} s a run, ${runs} runs each, alternating`);
  // BENCH_ONLY=plugin: the plugin's runs alone (to profile them).
  for (let i = 0; i < runs; i++) {
    if (process.env.BENCH_ONLY !== 'plugin') builtin.push(await run(false));
    remote.push(await run(true));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ours = median(remote);
  const baseline = builtin.length ? median(builtin) : NaN;
  // Where each path's CPU goes (median of its runs per process): the plugin path's extra cost by process.
  for (const published of [false, true]) {
    const mine = samples.filter((x) => x.published === published);
    if (!mine.length) continue;
    const keysOf = Object.keys(mine[0].per).filter((k) => published || k !== 'plugin');
    console.log(`${published ? 'gRPC plugin' : 'built-in   '}  median CPU per event (ms): ${keysOf.map((k) => `${k} ${median(mine.map((x) => x.per[k])).toFixed(3)}`).join(', ')}`);
  }
  console.log(`\ngRPC plugin ${ours.toFixed(0)} events/s, built-in ${baseline.toFixed(0)} events/s: ${(ours / baseline).toFixed(2)}× (target ≥ 0.7×)`);
  record({ measure: 'webhook ingestion through a gRPC plugin vs the built-in (events/s, end to end)', ours, baseline, unit: 'events/s', goal: '≥ 0.7×', met: ours / baseline >= 0.7 });
  plugin.send('stop');
  await new Promise((r) => plugin.once('exit', r));
  await pluginDb.end();
  redisInfo.disconnect();
  process.exit(0);
}
