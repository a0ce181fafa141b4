#!/usr/bin/env node
// statistics storage get and list through the built app (token check, zod, query DSL, logging) on
// 10,000 storages of one domain and 10,000 of another. Bounded in time; loopback only.
//   npm run build && node tools/bench/statistics/storage.mjs   (BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_STORAGES)
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { load } from '../lib/load.mjs';
import { record } from '../lib/report.mjs';
import { freshDatabase, root, signingKeys, waitReady } from '../lib/setup.mjs';

const seconds = Number(process.env.BENCH_SECONDS || 5);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 32);
const storages = Number(process.env.BENCH_STORAGES || 10_000);

const dbUrl = await freshDatabase('statistics', 'bench_statistics');
const seed = new pg.Client({ connectionString: dbUrl });
await seed.connect();
await seed.query(
  `INSERT INTO storage (domain_id, storage_id, name, state, options, capability, plugin_info, tags, user_id)
   SELECT d, 'storage-' || lpad(i::text, 12, '0'), 'storage ' || i, CASE WHEN i % 5 = 0 THEN 'DISABLED' ELSE 'ENABLED' END,
          '{"host":"db.example","port":5432,"database":"stats"}', '{"supported_schema":["postgresql_password"]}',
          jsonb_build_object('plugin_id', 'plugin-postgresql-stat-storage', 'version', '1.1.0', 'options', '{}'::jsonb, 'secret_id', 'secret-' || i, 'metadata', '{}'::jsonb),
          jsonb_build_object('tier', CASE WHEN i % 3 = 0 THEN 'gold' ELSE 'silver' END), 'admin'
   FROM generate_series(1, $1) i, unnest(ARRAY['d1', 'd2']) d`,
  [storages],
);
await seed.query('ANALYZE');
await seed.end();

const keys = signingKeys();
const token = await keys.token({ user_id: 'admin', workspace_id: '', role_type: 'DOMAIN_ADMIN', role_id: 'managed-domain-admin', scope: 'DOMAIN' });

const port = 18113;
const app = spawn(process.execPath, [path.join(root, 'dist/apps/statistics/main.js')], {
  env: { ...process.env, PORT: String(port), DATABASE_URL: dbUrl, JWT_PUBLIC_KEY: keys.publicPem, LOG_LEVEL: process.env.LOG_LEVEL || 'info' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
process.on('exit', () => app.kill('SIGTERM')); // also when the benchmark fails
await waitReady(port, 'statistics');

const headers = { authorization: `Bearer ${token}` };
const cases = [
  ['get', 'get', (i) => ({ domain_id: 'd1', storage_id: `storage-${String((i * 7919) % storages + 1).padStart(12, '0')}` })],
  ['list page', 'list', (i) => ({ domain_id: 'd1', state: 'ENABLED', query: { sort: [{ key: 'name' }], page: { start: (i % 50) * 20 + 1, limit: 20 } } })],
  ['list tags', 'list', () => ({ domain_id: 'd1', query: { filter: [{ k: 'tags.tier', v: 'gold', o: 'eq' }], page: { limit: 20 } } })],
  ['stat', 'stat', () => ({ domain_id: 'd1', query: { aggregate: [{ group: { keys: [{ key: 'state', name: 'state' }], fields: [{ name: 'n', operator: 'count' }] } }] } })],
];
console.log(`statistics storage, ${storages} storages per domain, concurrency ${concurrency}, ${seconds} s each`);
let failed = 0;
for (const [label, op, body] of cases) {
  const url = `http://127.0.0.1:${port}/statistics/v1/storage/${op}`;
  await load({ url, body, headers, concurrency, durationMs: 1000 }); // warm-up
  const r = await load({ url, body, headers, concurrency, durationMs: seconds * 1000 });
  failed += r.errors;
  record({ measure: `storage ${label} throughput`, ours: r.rps, unit: 'req/s' });
  console.log(`${label.padEnd(10)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors)`);
}
app.kill('SIGTERM');
await new Promise((r) => app.on('exit', r));
process.exit(failed ? 1 : 0);
