// The Prisma schema engine, run as WebAssembly: no native binary is ever downloaded.
// Used by `npm run migrate`, the test fixture (through migrate.mjs), `npm run db:migration` and the k8s
// migration Job. See shared/prisma-offline.md for why this exists.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);
const wasmDir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
let bgModule;

async function loadWasm() {
  if (bgModule) return bgModule;
  const bg = await import(path.join(wasmDir, 'schema_engine_bg.js'));
  const { instance } = await WebAssembly.instantiate(readFileSync(path.join(wasmDir, 'schema_engine_bg.wasm')), {
    './schema_engine_bg.js': bg,
  });
  bg.__wbg_set_wasm(instance.exports);
  instance.exports.__wbindgen_start?.();
  globalThis.PRISMA_WASM_PANIC_REGISTRY = {
    set_message: (message) => {
      process.stderr.write(`schema engine panic: ${message}\n`);
    },
  };
  bgModule = bg;
  return bg;
}

const FILTERS = { externalTables: [], externalEnums: [] };

/** Connection options for the adapter from a postgres URL. */
export function connectionFromUrl(url) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username || 'postgres'),
    password: u.password ? decodeURIComponent(u.password) : undefined,
    database: decodeURIComponent(u.pathname.replace(/^\//, '')),
  };
}

/**
 * adapter-pg's executeScript splits a migration on every `;` (in comments, strings and function bodies
 * too) and runs the pieces one by one on whatever pooled connection is free. A migration is sent whole
 * instead, as one simple query on one connection: PostgreSQL parses it (a PL/pgSQL function with `;` in
 * its body, a comment with one) and runs it as one implicit transaction (or in the BEGIN/COMMIT it
 * holds); on a failure the connection is rolled back before it goes back to the pool.
 */
class WholeScriptPg extends PrismaPg {
  async connect() {
    const adapter = await super.connect();
    adapter.executeScript = async (script) => {
      const client = await adapter.client.connect().catch((e) => adapter.onError(e));
      try {
        await client.query(script);
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        adapter.onError(error);
      } finally {
        client.release();
      }
    };
    return adapter;
  }
}

async function openEngine(schemaPath, databaseUrl) {
  const bg = await loadWasm();
  const schemaText = readFileSync(schemaPath, 'utf8');
  // The engine wants an adapter factory even for diffs, which never open a connection.
  const url = databaseUrl || 'postgresql://postgres@127.0.0.1:5432/postgres';
  const adapter = bindMigrationAwareSqlAdapterFactory(new WholeScriptPg(connectionFromUrl(url)));
  return bg.SchemaEngine.new({ datamodels: [[path.basename(schemaPath), schemaText]] }, () => {}, adapter);
}

/** The migrations folder in the shape the engine takes. */
export function readMigrations(migrationsDir) {
  const lockPath = path.join(migrationsDir, 'migration_lock.toml');
  const dirs = existsSync(migrationsDir)
    ? readdirSync(migrationsDir, { withFileTypes: true })
        .filter((d) => d.isDirectory() && existsSync(path.join(migrationsDir, d.name, 'migration.sql')))
        .map((d) => d.name)
        .sort()
    : [];
  return {
    baseDir: migrationsDir,
    lockfile: {
      path: 'migration_lock.toml',
      content: existsSync(lockPath) ? readFileSync(lockPath, 'utf8') : 'provider = "postgresql"\n',
    },
    shadowDbInitScript: '',
    migrationDirectories: dirs.map((name) => ({
      path: name,
      migrationFile: {
        path: 'migration.sql',
        content: { tag: 'ok', value: readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8') },
      },
    })),
  };
}

/** Applies pending migrations, recording them in _prisma_migrations like `prisma migrate deploy`. */
export async function applyMigrations({ schemaPath, migrationsDir, databaseUrl }) {
  const engine = await openEngine(schemaPath, databaseUrl);
  try {
    const result = await engine.applyMigrations({ migrationsList: readMigrations(migrationsDir), filters: FILTERS });
    return result.appliedMigrationNames ?? [];
  } finally {
    engine.free?.();
  }
}

/** SQL that turns schema `fromText` (or nothing) into schema `toText`, with no database involved. */
export async function diffSchemas({ schemaPath, fromText, toText }) {
  const engine = await openEngine(schemaPath);
  const from = fromText == null ? { tag: 'empty' } : { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: fromText }] };
  const to = { tag: 'schemaDatamodel', files: [{ path: 'schema.prisma', content: toText }] };
  const out = await engine.diff({ from, to, script: true, exitCode: null, filters: FILTERS });
  return (out.stdout ?? '').trim();
}
