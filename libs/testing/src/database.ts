import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Pool } from 'pg';

const ROOT = path.resolve(__dirname, '../../..');
const ADMIN_URL = process.env.TEST_PG_ADMIN_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TempDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function migrationsHash(app: string): string {
  const dir = path.join(ROOT, 'apps', app, 'prisma/migrations');
  const h = createHash('sha1');
  h.update(app);
  if (existsSync(dir)) {
    for (const m of readdirSync(dir).sort()) {
      const f = path.join(dir, m, 'migration.sql');
      if (existsSync(f)) h.update(m).update(readFileSync(f));
    }
  }
  return h.digest('hex').slice(0, 12);
}

/**
 * A migrated template per app and migration set, made once (under an advisory lock, so parallel
 * workers wait for the first) with the project's real migration tool. Test databases are cloned
 * from it, which takes milliseconds. Templates hold no test data: nothing is shared between tests.
 */
async function ensureTemplate(app: string): Promise<string> {
  const template = `tmpl_${app.replace(/-/g, '_')}_${migrationsHash(app)}`;
  return admin(async (c) => {
    await c.query('SELECT pg_advisory_lock(hashtext($1))', [template]);
    try {
      const { rows } = await c.query('SELECT datistemplate FROM pg_database WHERE datname = $1', [template]);
      if (rows[0]?.datistemplate) return template;
      if (rows.length) await c.query(`DROP DATABASE "${template}" WITH (FORCE)`);
      const run = spawnSync(
        process.execPath,
        [path.join(ROOT, 'tools/prisma/migrate.mjs'), '--app', app, '--database-url', withDatabase(ADMIN_URL, template)],
        { encoding: 'utf8', cwd: ROOT },
      );
      if (run.status !== 0) throw new Error(`migrating template for ${app} failed: ${run.stderr || run.stdout}`);
      await c.query(`ALTER DATABASE "${template}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      await c.query(`COMMENT ON DATABASE "${template}" IS '${Date.now()}'`);
      // Templates of other migration sets are dropped once they are a day old: another checkout of the
      // project (a branch with a new migration) may still clone its own, so a younger one is left alone.
      const old = await c.query(
        `SELECT datname FROM pg_database
          WHERE datname LIKE $1 AND datname <> $2
            AND COALESCE(NULLIF(regexp_replace(COALESCE(shobj_description(oid, 'pg_database'), ''), '[^0-9]', '', 'g'), '')::bigint, 0) < $3`,
        [`tmpl\\_${app.replace(/-/g, '\\_')}\\_%`, template, Date.now() - 24 * 3600_000],
      );
      for (const { datname } of old.rows) {
        await c.query(`ALTER DATABASE "${datname}" WITH IS_TEMPLATE false`).catch(() => {});
        await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
      }
      return template;
    } finally {
      await c.query('SELECT pg_advisory_unlock(hashtext($1))', [template]);
    }
  });
}

/**
 * A fresh database for one test file: migrated like the app's own (when `app` is given) or empty.
 * Drop it in afterAll.
 */
export async function createTempDatabase(options: { app?: string; prefix?: string } = {}): Promise<TempDatabase> {
  const template = options.app ? await ensureTemplate(options.app) : undefined;
  const name = `t_${(options.prefix ?? options.app ?? 'db').replace(/[^a-z0-9]/gi, '_')}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`));
  const url = withDatabase(ADMIN_URL, name);
  const pool = new Pool({ connectionString: url, max: 5 });
  // drop() ends connections by force; a client still closing must not fail the test.
  pool.on('error', () => {});
  let dropped = false;
  return {
    name,
    url,
    pool,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end().catch(() => {});
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}
