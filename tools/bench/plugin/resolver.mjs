#!/usr/bin/env node
// Benchmark of plugin endpoint resolution (libs/plugin PluginEndpointResolver): resolves/s from the
// memory cache against reading the plugin module's table every time (tableSource + the version pick),
// and how long a publish takes to reach another replica's resolver (announce -> its entry dropped).
//
//   node tools/bench/plugin/resolver.mjs
//
// Env: BENCH_RESOLVES (20000 cached, a tenth of it uncached), BENCH_VERSIONS (versions published for
// the plugin, 20), BENCH_CHANGES (200 announcements timed), BENCH_REDIS_URL (redis://127.0.0.1:6379/9).
// It makes its own database (bench_plugin_resolver_<pid>) with the plugin app's migrations, and drops it.
import { createRequire } from 'node:module';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import Redis from 'ioredis';
import { bundle } from '../../build/bundle.mjs';
import { record } from '../lib/report.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(here, '../../..');
const RESOLVES = Number(process.env.BENCH_RESOLVES || 20_000);
const VERSIONS = Number(process.env.BENCH_VERSIONS || 20);
const CHANGES = Number(process.env.BENCH_CHANGES || 200);
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379/9';
const DB = `bench_plugin_resolver_${process.pid}`;
const SERVER = 'postgresql://postgres@127.0.0.1:5432';

const entry = path.join(ROOT, 'tmp/bench-plugin/resolver.cjs');
await bundle({ entryPoints: [path.join(here, 'resolver-entry.ts')], outfile: entry });
const { EndpointChanges, PluginEndpointResolver, tableSource } = createRequire(import.meta.url)(entry);

const admin = new pg.Client({ connectionString: `${SERVER}/postgres` });
await admin.connect();
await admin.query(`CREATE DATABASE ${DB}`);
const pool = new pg.Pool({ connectionString: `${SERVER}/${DB}`, max: 4 });
const redis = new Redis(REDIS_URL);
const prefix = `bench:${process.pid}:`;
const resolvers = [];
try {
  const migrations = path.join(ROOT, 'apps/plugin/prisma/migrations');
  for (const dir of readdirSync(migrations).filter((d) => /^\d/.test(d)).sort()) await pool.query(readFileSync(path.join(migrations, dir, 'migration.sql'), 'utf8'));
  await pool.query(`INSERT INTO supervisor (domain_id, supervisor_id, name, hostname, secret_digest) VALUES ('d1', 's1', 'bench', 'bench', 'x')`);
  for (let v = 0; v < VERSIONS; v++) {
    await pool.query(
      `INSERT INTO installed_plugin (supervisor_id, domain_id, supervisor_name, hostname, plugin_id, version, state, endpoint) VALUES ('s1', 'd1', 'bench', 'bench', 'plugin-bench', $1, 'ACTIVE', $2)`,
      [`1.${v}.0`, `grpc://bench-${v}:50051`],
    );
  }
  const source = tableSource(pool);
  const [a, b] = [new PluginEndpointResolver(redis, source, { prefix }), new PluginEndpointResolver(redis, source, { prefix })];
  resolvers.push(a, b);
  await Promise.all([a.start(), b.start()]);
  const ask = { domainId: 'd1', pluginId: 'plugin-bench', version: '1.0.0', upgradeMode: 'AUTO' };

  // uncached: the table read and the pick, every time
  const uncachedN = Math.max(100, Math.floor(RESOLVES / 10));
  let t = process.hrtime.bigint();
  for (let i = 0; i < uncachedN; i++) await source.candidates('d1', 'plugin-bench');
  const uncached = uncachedN / (Number(process.hrtime.bigint() - t) / 1e9);
  // cached
  await a.resolve(ask);
  t = process.hrtime.bigint();
  for (let i = 0; i < RESOLVES; i++) await a.resolve(ask);
  const cached = RESOLVES / (Number(process.hrtime.bigint() - t) / 1e9);

  // a change announced through Redis: until b's entry is gone
  const changes = new EndpointChanges(redis, prefix);
  const lat = [];
  for (let i = 0; i < CHANGES; i++) {
    await b.resolve(ask);
    const start = process.hrtime.bigint();
    await changes.announce({ domainId: 'd1', pluginIds: ['plugin-bench'] });
    while (b.size > 0) await new Promise((r) => setImmediate(r));
    lat.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  lat.sort((x, y) => x - y);
  const p = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];
  console.log(`resolve from the cache: ${Math.round(cached)}/s; from the table (${VERSIONS} versions): ${Math.round(uncached)}/s (${(cached / uncached).toFixed(0)}×)`);
  console.log(`a change reaching another resolver (${CHANGES}): p50 ${p(0.5).toFixed(2)} ms, p99 ${p(0.99).toFixed(2)} ms, max ${lat.at(-1).toFixed(2)} ms`);
  record({ measure: `endpoint resolve, cached vs the table (${VERSIONS} versions)`, ours: cached, baseline: uncached, unit: 'resolves/s' });
  record({ measure: 'a publish reaching another replica’s resolver (p99)', ours: p(0.99), unit: 'ms' });
} finally {
  for (const r of resolvers) r.stop();
  redis.disconnect();
  await pool.end();
  await admin.query(`DROP DATABASE IF EXISTS ${DB}`);
  await admin.end();
}
