#!/usr/bin/env node
// project-group/get through the identity app (token check, zod, logging, metrics, Prisma) against a
// minimal node:http + pg server running the same query, at the same concurrency, in one run.
//   npm run build && node tools/bench/identity-get.mjs   (BENCH_SECONDS, BENCH_CONCURRENCY, BENCH_GROUPS)
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import pg from 'pg';
import { SignJWT } from 'jose';
import { migrateApp } from '../prisma/migrate.mjs';
import { load } from './lib/load.mjs';
import { record } from './lib/report.mjs';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const seconds = Number(process.env.BENCH_SECONDS || 10);
const concurrency = Number(process.env.BENCH_CONCURRENCY || 32);
const groups = Number(process.env.BENCH_GROUPS || 10_000);
const dbName = 'bench_identity';
const adminUrl = 'postgresql://postgres@127.0.0.1:5432/postgres';
const dbUrl = `postgresql://postgres@127.0.0.1:5432/${dbName}`;

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await admin.end();
await migrateApp('identity', dbUrl);
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

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const token = await new SignJWT({
  token_type: 'ACCESS_TOKEN', user_id: 'owner', domain_id: 'd1', workspace_id: 'ws-1', role_type: 'WORKSPACE_OWNER',
  role_id: 'managed-workspace-owner', scope: 'WORKSPACE', permissions: ['*'], user_type: 'USER',
})
  .setProtectedHeader({ alg: 'EdDSA' }).setIssuer('platform.identity').setAudience('platform').setSubject('owner')
  .setIssuedAt().setExpirationTime('1h').sign(privateKey);

const appPort = 18101;
const rawPort = 18199;
// BENCH_CPU_PROF=dir: both servers write a V8 CPU profile there (app-*.cpuprofile, raw-*.cpuprofile).
const profile = (name) => (process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${name}-${process.pid}.cpuprofile`] : []);
const app = spawn(process.execPath, [...profile('app'), path.join(root, 'dist/apps/identity/main.js')], {
  env: {
    ...process.env, PORT: String(appPort), DATABASE_URL: dbUrl, BOOTSTRAP_DOMAIN_ID: 'd1', BOOTSTRAP_PASSWORD: 'bench-password',
    JWT_PRIVATE_KEY: privateKey.export({ type: 'pkcs8', format: 'pem' }), JWT_PUBLIC_KEY: publicKey.export({ type: 'spki', format: 'pem' }),
    LOG_LEVEL: process.env.LOG_LEVEL || 'info',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});

// The raw server, in its own process as the app is (a server sharing the load generator's process
// would skip the context switches the app pays).
const raw = spawn(process.execPath, [...profile('raw'), path.join(root, 'tools/bench/lib/raw-project-group-server.mjs')], {
  env: { ...process.env, PORT: String(rawPort), DATABASE_URL: dbUrl },
  stdio: ['ignore', 'ignore', 'inherit'],
});

async function waitReady(port) {
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise((resolve) => http.get(`http://127.0.0.1:${port}/readyz`, (r) => (r.resume(), resolve(r.statusCode === 200))).on('error', () => resolve(false)));
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('app did not become ready');
}
await waitReady(appPort);
await new Promise((r) => setTimeout(r, 500)); // the raw server has no /readyz: give it a moment

const body = (i) => ({ project_group_id: `pg-${String((i * 7919) % groups + 1).padStart(12, '0')}` });
const run = async (label, port, headers) => {
  await load({ url: `http://127.0.0.1:${port}/identity/v2/project-group/get`, body, headers, concurrency, durationMs: 2000 }); // warm-up
  const r = await load({ url: `http://127.0.0.1:${port}/identity/v2/project-group/get`, body, headers, concurrency, durationMs: seconds * 1000 });
  console.log(`${label.padEnd(10)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(2)} ms  p99 ${r.p99.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors)`);
  return r;
};
console.log(`project-group/get, ${groups} groups, concurrency ${concurrency}, ${seconds} s each`);
const a = await run('raw', rawPort, {});
const b = await run('identity', appPort, { authorization: `Bearer ${token}` });
console.log(`ratio identity/raw throughput: ${(b.rps / a.rps).toFixed(2)} (target >= 0.7)`);
record({ measure: 'project-group/get throughput vs raw node:http + pg', ours: b.rps, baseline: a.rps, unit: 'req/s', goal: '≥ 0.7×', met: b.rps / a.rps >= 0.7 });
record({ measure: 'project-group/get p99 vs raw', ours: b.p99, baseline: a.p99, unit: 'ms', goal: '≤ 2×', met: b.p99 <= 2 * a.p99 });

app.kill('SIGTERM');
await new Promise((r) => app.on('exit', r));
raw.kill('SIGTERM');
await new Promise((r) => raw.on('exit', r));
process.exit(a.errors || b.errors ? 1 : 0);
