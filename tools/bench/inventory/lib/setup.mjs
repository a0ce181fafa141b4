// Shared by the inventory benchmarks: a bench database with BENCH_ROWS cloud services, a token, and
// the built inventory app (dist/apps/inventory/main.js) started as a child process. Loopback only.
import { spawn } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { adminQuery, databaseUrl, freshDatabase, root, signingKeys, waitReady } from '../../lib/setup.mjs';

export { root };
export const rows = Number(process.env.BENCH_ROWS || 1_000_000);
const dbName = `bench_inventory_${rows}`;
export const dbUrl = databaseUrl(dbName);

/**
 * The bench database, made once per row count and kept (seeding a million rows takes a while):
 * domain d1 / workspace ws-1, 3 providers x 4 groups x 3 types, 20 regions, 50 projects, a jsonb `data`
 * of eight keys, three tags and two IP addresses per record.
 */
export async function ensureData() {
  const exists = (await adminQuery('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rowCount > 0;
  if (exists) {
    const c = new pg.Client({ connectionString: dbUrl });
    await c.connect();
    const n = await c.query(`SELECT count(*)::int AS n FROM cloud_service`).catch(() => ({ rows: [{ n: -1 }] }));
    await c.end();
    if (n.rows[0].n === rows) return;
  }
  await freshDatabase('inventory', dbName);
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  const chunk = 100_000;
  const started = Date.now();
  for (let from = 1; from <= rows; from += chunk) {
    const to = Math.min(rows, from + chunk - 1);
    await c.query(
      `INSERT INTO cloud_service (domain_id, cloud_service_id, workspace_id, project_id, name, state, account, instance_type,
         instance_size, ip_addresses, provider, cloud_service_group, cloud_service_type, ref_cloud_service_type, data, metadata,
         reference, tags, tag_keys, collection_info, region_code, launched_at, created_at, updated_at)
       SELECT 'd1', 'cloud-svc-' || lpad(to_hex(i), 12, '0'), 'ws-1', 'project-' || (i % 50), 'resource-' || i, 'ACTIVE',
         'account-' || (i % 7), (ARRAY['t3.micro','m5.large','c6g.xlarge','e2-standard-4'])[1 + i % 4], (i % 64)::float8,
         ARRAY['10.' || (i % 256) || '.' || (i / 256 % 256) || '.' || (i % 7), '54.' || (i % 200) || '.0.' || (i % 250)],
         (ARRAY['aws','google_cloud','azure'])[1 + i % 3], 'Group' || (i / 3 % 4), 'Type' || (i / 12 % 3), 'x',
         jsonb_build_object('power_state', (ARRAY['RUNNING','STOPPED','RUNNING','RUNNING'])[1 + i / 7 % 4], 'cpu', 1 + i % 16, 'memory_gb', 2 * (1 + i % 32),
           'image', 'ami-' || to_hex(i % 1000), 'vpc', 'vpc-' || (i % 40), 'subnet', 'subnet-' || (i % 200),
           'security_groups', jsonb_build_array('sg-' || (i % 30), 'sg-' || (i % 31)), 'launch_index', i % 10),
         '{}'::jsonb, jsonb_build_object('resource_id', 'arn:resource:' || i, 'external_link', ''),
         jsonb_build_object('env', (ARRAY['prod','dev','stage'])[1 + i % 3], 'team', 'team-' || (i % 12), 'owner', 'user' || (i % 100)),
         '{}'::jsonb, '{}'::jsonb, 'region-' || (i / 5 % 20),
         timestamptz '2024-01-01' + i * interval '17 seconds', timestamptz '2024-01-01' + i * interval '17 seconds', now()
       FROM generate_series($1::int, $2::int) i`,
      [from, to],
    );
    process.stdout.write(`\rseeded ${to}/${rows} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  }
  process.stdout.write('\n');
  await c.query('VACUUM ANALYZE cloud_service');
  await c.end();
}

const keys = signingKeys();
export const token = await keys.token();

/**
 * Node flags of the app: the deployment setting recommended for inventory (a bounded old generation,
 * see docs/decisions/inventory.md), or BENCH_NODE_ARGS (e.g. "" for Node's defaults, "--cpu-prof").
 */
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '--max-old-space-size=128').split(' ').filter(Boolean);

/**
 * Starts the built app on `port` (from `dist`, by default BENCH_DIST or dist/apps/inventory: another
 * build, e.g. a base checkout's, for A/B runs); answers {proc, url, stop()} once /readyz is 200.
 */
export async function startApp(port, dist = process.env.BENCH_DIST || 'dist/apps/inventory') {
  const proc = spawn(process.execPath, [...nodeArgs, path.join(path.resolve(root, dist), 'main.js')], {
    env: {
      ...process.env, PORT: String(port), DATABASE_URL: dbUrl, PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      JWT_PUBLIC_KEY: keys.publicPem, LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    },
    stdio: ['ignore', process.env.BENCH_APP_STDOUT ? 'inherit' : 'ignore', 'inherit'],
  });
  // A benchmark that fails (it throws) must not leave its app running.
  const orphan = () => proc.kill('SIGTERM');
  process.on('exit', orphan);
  await waitReady(port, 'inventory');
  return {
    proc,
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise((r) => (process.off('exit', orphan), proc.once('exit', r), proc.kill('SIGTERM'))),
  };
}

/** Peak resident memory of a process (VmHWM), in MB. */
export async function peakRssMb(pid) {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)[1]) / 1024;
}
