import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type PoolClient, type PoolConfig } from 'pg';

export { Pool };
export type { PoolClient };

/** One pg pool per app: Prisma (through the driver adapter) and the query DSL's raw SQL share it. */
export function createPool(connectionString: string, config: PoolConfig = {}): Pool {
  const pool = new Pool({
    connectionString,
    max: Number(process.env.DATABASE_POOL_MAX || 10),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 5_000,
    ...config,
  });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** A generated Prisma 7 client class, constructed with the pg driver adapter on `pool`. */
export function createPrisma<T>(Client: new (options: { adapter: PrismaPg }) => T, pool: Pool): T {
  return new Client({ adapter: new PrismaPg(pool) });
}

/** Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
export async function withTransaction<T>(pool: Pool, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const out = await fn(client);
    await client.query('COMMIT');
    return out;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

export function postgresCheck(pool: Pool): () => Promise<unknown> {
  return () => pool.query('SELECT 1');
}

export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: string } | undefined)?.code;
  return code === '23505' || code === 'P2002';
}

/**
 * Applies an app's migrations with the project's migration tool (tools/prisma/migrate.mjs, which runs
 * Prisma's schema engine as WebAssembly). Used by an app's start when MIGRATE_ON_START is set.
 */
export function migrateApp(app: string, databaseUrl: string, root = findRoot()): void {
  const run = spawnSync(process.execPath, [path.join(root, 'tools/prisma/migrate.mjs'), '--app', app, '--database-url', databaseUrl], {
    encoding: 'utf8',
    cwd: root,
  });
  if (run.status !== 0) throw new Error(`migrations of ${app} failed: ${run.stderr || run.stdout}`);
}

function findRoot(): string {
  return process.env.PLATFORM_ROOT || process.cwd();
}
