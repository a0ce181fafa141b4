// First: loads pg's runtime probe without loading undici (see pg-stream.ts).
import './pg-stream';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { PrismaPg } from '@prisma/adapter-pg';
import { Pool, type PoolClient } from 'pg';

export { Pool };
export type { PoolClient };

export * from './pool';

/** A generated Prisma 7 client class, constructed with the pg driver adapter on `pool`. */
export function createPrisma<T>(Client: new (options: { adapter: PrismaPg }) => T, pool: Pool): T {
  wasmBaselineOnly();
  return new Client({ adapter: new PrismaPg(pool) });
}

let wasmFlagSet = false;
/**
 * Prisma's query compiler is a 3.4 MB WebAssembly module, compiled on the first query. V8 compiles it
 * with Liftoff (its baseline compiler), then recompiles the functions it finds hot with TurboFan on
 * background threads; those compilations take 60-100 MB of scratch memory that glibc keeps in its
 * per-thread arenas once freed (measured: an idle identity at 190-225 MB, 130-140 MB without it). The
 * compiler only runs for a query shape Prisma has not planned yet (its plans are cached), so its
 * code quality is off the request path: the module stays on Liftoff code (issue #14,
 * docs/decisions/performance.md "Footprint and startup"). Set before the module is compiled: the
 * client compiles it lazily, on its first query.
 */
function wasmBaselineOnly() {
  if (wasmFlagSet) return;
  wasmFlagSet = true;
  setFlagsFromString('--liftoff-only');
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

export * from './read-router';
