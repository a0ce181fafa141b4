#!/usr/bin/env node
// Webhook ingestion end to end: Alertmanager payloads POSTed to a webhook URL of the built monitoring
// app (dist/apps/monitoring/main.js), queued on BullMQ, parsed and stored by the built worker
// (dist/apps/monitoring/worker.js). Reports the accepting request's latency (p50/p99) and events/s
// from accepted to stored. Loopback only, bounded in time.
//   node tools/build/build-app.mjs monitoring && node tools/bench/monitoring/webhook-ingest.mjs
//   (BENCH_SECONDS=20, BENCH_CONCURRENCY=32, BENCH_KEYS=1000 distinct alerts, LOG_LEVEL=info,
//    BENCH_DIST=<another build dir>, BENCH_NODE_ARGS=<node flags for the app and the worker>,
//    BENCH_CLIENT=raw (default: pre-built requests on raw keep-alive sockets, lib/load.mjs loadRaw) or node
//    (node:http's client, which spends 2-3x the CPU per request on the two cores the platform uses too))
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import Redis from 'ioredis';
import { load, loadRaw } from '../lib/load.mjs';
import { record } from '../lib/report.mjs';
import { pgBackends, pgCpu, redisCpu, selfCpu } from '../lib/cpu-breakdown.mjs';
import { cpuSeconds, freshDatabase, root, signingKeys, waitReady } from '../lib/setup.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 20);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 32);
const keys = Number(process.env.BENCH_KEYS || 1000);
const dbName = 'bench_monitoring';
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const queuePrefix = `bench-monitoring-${randomBytes(4).toString('hex')}`;
const port = 18105;

const dbUrl = await freshDatabase('monitoring', dbName);
// The plugin table (empty: the built-in parses): without it the worker cannot tell whether a plugin is
// published for the webhook's id, and every delivery waits for it (PluginUnavailable) instead of being stored.
const pluginDbUrl = await freshDatabase('plugin', 'bench_monitoring_plugins');
const db = new pg.Pool({ connectionString: dbUrl, max: 2 });
const accessKey = randomBytes(24).toString('base64url');
const webhookId = 'webhook-bench00000001';
await db.query(
  `INSERT INTO webhook (domain_id, webhook_id, workspace_id, project_id, name, access_key, webhook_url, plugin_info)
   VALUES ('d1', $1, 'ws-1', 'project-1', 'bench', $2, '', $3)`,
  [webhookId, accessKey, JSON.stringify({ plugin_id: 'plugin-prometheus-mon-webhook', version: '1.1.0', options: {}, metadata: {}, upgrade_mode: 'AUTO' })],
);

const env = {
  ...process.env,
  PORT: String(port),
  DATABASE_URL: dbUrl,
  PLUGIN_DATABASE_URL: pluginDbUrl,
  REDIS_URL: redisUrl,
  QUEUE_PREFIX: queuePrefix,
  JWT_PUBLIC_KEY: signingKeys().publicPem,
  LOG_LEVEL: process.env.LOG_LEVEL || 'info',
};
// BENCH_DIST: another build of the app to run (to compare two builds, run them alternately).
const dist = path.resolve(root, process.env.BENCH_DIST || 'dist/apps/monitoring');
// BENCH_NODE_ARGS: extra node flags for the app and the worker, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"
// (profiles are written when they exit after the run).
const nodeArgs = (process.env.BENCH_NODE_ARGS || '').split(/\s+/).filter(Boolean);
const children = ['main', 'worker'].map((entry) =>
  spawn(process.execPath, [...nodeArgs, path.join(dist, `${entry}.js`)], { env, stdio: ['ignore', 'ignore', 'inherit'] }),
);
const stop = async () => {
  for (const c of children) c.kill('SIGTERM');
  const redis = new Redis(redisUrl);
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
    if (found.length) await redis.del(...found);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
  await db.end();
};

process.on('exit', () => children.forEach((c) => c.kill('SIGTERM'))); // also when the benchmark fails
await waitReady(port, 'monitoring');

const stored = async () => Number((await db.query('SELECT count(*) FROM webhook_delivery')).rows[0].count);
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
const url = `http://127.0.0.1:${port}/monitoring/v1/webhook/${webhookId}/${accessKey}/events`;

// CPU seconds used so far: each child from /proc, Redis from INFO, the Postgres backends of the bench database
// (the machine is shared: CPU per event is the stable figure).
const redisInfo = new Redis(redisUrl);
const cpu = async (pids) => ({ app: cpuSeconds(children[0].pid), worker: cpuSeconds(children[1].pid), redis: await redisCpu(redisInfo), postgres: pgCpu(pids), load: selfCpu() });

const client = process.env.BENCH_CLIENT || 'raw';
const drive = client === 'node' ? load : (o) => loadRaw({ ...o, variants: keys });
const w = await drive({ url, body: alert, concurrency, durationMs: 2000 }); // warm-up (also stored)
for (let i = 0; i < 300 && (await stored()) < w.requests - w.errors; i++) await new Promise((res) => setTimeout(res, 100));
const warm = await stored();
const pids = await pgBackends(db, [dbName]); // the app's and the worker's pools are open by now
const cpu0 = await cpu(pids);
const t0 = Date.now();
const r = await drive({ url, body: alert, concurrency, durationMs: seconds * 1000 });
const acceptedEnd = Date.now();
const storedAtEnd = (await stored()) - warm;
const accepted = r.requests - r.errors;
const deadline = Date.now() + 120_000;
let done = storedAtEnd;
while (done < accepted && Date.now() < deadline) {
  await new Promise((res) => setTimeout(res, 100));
  done = (await stored()) - warm;
}
const t1 = Date.now();
const cpu1 = await cpu(pids);
redisInfo.disconnect();
const events = Number((await db.query('SELECT count(*) FROM event')).rows[0].count);
const alerts = Number((await db.query('SELECT count(*) FROM alert')).rows[0].count);

console.log(`webhook ingestion (Alertmanager payloads, ${keys} distinct alerts), concurrency ${concurrency}, ${seconds} s, ${client} client`);
console.log(`accepting request  ${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors)`);
console.log(`stored during load ${(storedAtEnd / ((acceptedEnd - t0) / 1000)).toFixed(0).padStart(6)} events/s  (${storedAtEnd} of ${accepted} by the end of the load)`);
console.log(`end to end         ${(done / ((t1 - t0) / 1000)).toFixed(0).padStart(6)} events/s  (${done} accepted → stored in ${((t1 - t0) / 1000).toFixed(1)} s; backlog drained ${((t1 - acceptedEnd) / 1000).toFixed(1)} s after the load)`);
const perEvent = (k) => (((cpu1[k] - cpu0[k]) * 1000) / done).toFixed(3);
console.log(`CPU per event      app ${perEvent('app')} ms, worker ${perEvent('worker')} ms, redis ${perEvent('redis')} ms, postgres ${perEvent('postgres')} ms, load generator ${perEvent('load')} ms`);
console.log(`                   (2 cores = 0.667 ms of CPU per event at 3000 events/s, for all of them together)`);
console.log(`rows: ${events} events in ${alerts} alerts; target >= 3000 events/s sustained, p99 < 50 ms`);
const e2e = done / ((t1 - t0) / 1000);
record({ measure: 'webhook ingestion end to end', ours: e2e, unit: 'events/s', goal: '≥ 3,000 events/s', met: e2e >= 3000 });
record({ measure: 'webhook accept p99', ours: r.p99, unit: 'ms', goal: '< 50 ms', met: r.p99 < 50 });
await stop();
process.exit(r.errors || done < accepted ? 1 : 0);
