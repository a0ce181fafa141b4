#!/usr/bin/env node
// The webhook id oracle (issue #32): latency of a refused delivery to a known, cached webhook (wrong key)
// against one to an unknown id, on the built monitoring app (dist/apps/monitoring/main.js). One request
// at a time on a keep-alive connection, the two kinds alternated; the webhook is kept in the app's
// cache by a right delivery before each pair. Reports p50/p99 of each and the gap of the medians.
//   node tools/build/build-app.mjs monitoring && node tools/bench/monitoring/webhook-probe.mjs
//   (BENCH_REPEAT=2000 pairs; BENCH_DIST=<another build dir> to measure another build)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import Redis from 'ioredis';
import { record } from '../lib/report.mjs';
import { freshDatabase, root, signingKeys, waitReady } from '../lib/setup.mjs';

const pairs = Number(process.env.BENCH_REPEAT || 2000);
const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const queuePrefix = `bench-webhook-probe-${randomBytes(4).toString('hex')}`;
const port = 18125;

const dbUrl = await freshDatabase('monitoring', 'bench_monitoring_probe');
const db = new pg.Pool({ connectionString: dbUrl, max: 1 });
const accessKey = randomBytes(24).toString('base64url');
const webhookId = 'webhook-probe0000001';
await db.query(
  `INSERT INTO webhook (domain_id, webhook_id, workspace_id, project_id, name, access_key, webhook_url, plugin_info)
   VALUES ('d1', $1, 'ws-1', 'project-1', 'bench', $2, '', $3)`,
  [webhookId, accessKey, JSON.stringify({ plugin_id: 'plugin-prometheus-mon-webhook', version: '1.1.0', options: {}, metadata: {}, upgrade_mode: 'AUTO' })],
);
const dist = path.resolve(root, process.env.BENCH_DIST || 'dist/apps/monitoring');
const app = spawn(process.execPath, [path.join(dist, 'main.js')], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: dbUrl, REDIS_URL: redisUrl, QUEUE_PREFIX: queuePrefix, JWT_PUBLIC_KEY: signingKeys().publicPem, LOG_LEVEL: 'warn' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
process.on('exit', () => app.kill('SIGTERM'));
await waitReady(port, 'monitoring');

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ version: '4', status: 'firing', alerts: [] });
/** One POST to the webhook URL of `id` with `key`: its status and milliseconds. */
const post = (id, key) =>
  new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const req = http.request(
      { host: '127.0.0.1', port, agent, method: 'POST', path: `/monitoring/v1/webhook/${id}/${key}/events`, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t0) / 1e6 }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

const wrong = [];
const unknown = [];
for (let i = 0; i < 200; i++) await post(`webhook-unknown${i}`, 'x'); // warm-up
for (let i = 0; i < pairs; i++) {
  if ((await post(webhookId, accessKey)).status !== 200) throw new Error('the right key was refused');
  // Both kinds right after the cache was warmed, first one then the other in turn.
  const probeUnknown = () => post(`webhook-${randomBytes(6).toString('hex')}`, 'not-the-key');
  const probeWrong = () => post(webhookId, 'not-the-key');
  const [a, b] = i % 2 ? await probeWrong().then(async (x) => [x, await probeUnknown()]) : await probeUnknown().then(async (y) => [await probeWrong(), y]);
  if (a.status !== 403 || b.status !== 403) throw new Error(`expected 403s, got ${a.status} and ${b.status}`);
  wrong.push(a.ms);
  unknown.push(b.ms);
}
const pct = (xs, p) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const line = (name, xs) => `${name.padEnd(30)} p50 ${pct(xs, 50).toFixed(3)} ms  p99 ${pct(xs, 99).toFixed(3)} ms`;
console.log(`webhook refusals, ${pairs} pairs, one request at a time (${path.relative(root, dist)})`);
console.log(line('known id (cached), wrong key', wrong));
console.log(line('unknown id', unknown));
const gap = pct(unknown, 50) - pct(wrong, 50);
console.log(`gap of the medians: ${gap.toFixed(3)} ms (unknown - known)`);
record({ measure: 'webhook refusal: unknown id - wrong key (p50)', ours: gap, unit: 'ms', goal: '|gap| < 0.1 ms', met: Math.abs(gap) < 0.1 });

app.kill('SIGTERM');
agent.destroy();
const redis = new Redis(redisUrl);
let cursor = '0';
do {
  const [next, found] = await redis.scan(cursor, 'MATCH', `${queuePrefix}:*`, 'COUNT', 1000);
  if (found.length) await redis.del(...found);
  cursor = next;
} while (cursor !== '0');
redis.disconnect();
await db.end();
