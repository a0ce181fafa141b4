#!/usr/bin/env node
// Applies migrations (creating the database if it does not exist), then the app's after-migrate data
// steps. Idempotent.
//   node tools/prisma/migrate.mjs                      every app, each to its DATABASE_URL_<APP> or default
//   node tools/prisma/migrate.mjs --app identity [--database-url URL]
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { applyMigrations } from './engine.mjs';
import { appPaths, databaseUrlFor, prismaApps, ROOT } from './apps.mjs';

function arg(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

export async function ensureDatabase(url) {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  u.pathname = '/postgres';
  const client = new pg.Client({ connectionString: u.toString() });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) {
      await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((e) => {
        if (e.code !== '42P04') throw e; // created concurrently
      });
    }
  } finally {
    await client.end();
  }
}

export async function migrateApp(app, databaseUrl) {
  await ensureDatabase(databaseUrl);
  const { schemaPath, migrationsDir } = appPaths(app);
  const applied = await applyMigrations({ schemaPath, migrationsDir, databaseUrl });
  const all = readdirSync(migrationsDir).filter((d) => existsSync(path.join(migrationsDir, d, 'migration.sql')));
  // A database this run made from nothing holds no rows written by an earlier version: nothing to convert.
  if (applied.length < all.length) afterMigrate(app, databaseUrl);
  return applied;
}

/**
 * Data steps SQL cannot do, run after an app's migrations in the app's own code: sealing secrets that an
 * earlier version stored in plain text needs the app's key (SECRET_ENCRYPTION_KEY) and its sealing code
 * (libs/secrets). An app lists them in prisma/after-migrate.json as a command of its built admin entry,
 * `{"admin": ["secrets", "seal"]}`: dist/apps/<app>/admin.js here, dist/admin.js in the app's image
 * (where APP names the app). Each step is idempotent.
 */
function afterMigrate(app, databaseUrl) {
  const file = path.join(appPaths(app).prismaDir, 'after-migrate.json');
  if (!existsSync(file)) return;
  const { admin } = JSON.parse(readFileSync(file, 'utf8'));
  const entry = [path.join(ROOT, 'dist/apps', app, 'admin.js'), ...(process.env.APP === app ? [path.join(ROOT, 'dist/admin.js')] : [])].find((f) => existsSync(f));
  const command = `admin.js ${admin.join(' ')}`;
  if (!entry) {
    if (process.env.NODE_ENV === 'production') throw new Error(`${app}: "${command}" must run after the migrations, and the app's admin entry is missing`);
    console.error(`${app}: skipped "${command}" (the app is not built): run npm run build, then node dist/apps/${app}/${command}`);
    return;
  }
  const run = spawnSync(process.execPath, [entry, ...admin], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${app}: "${command}" failed: ${(run.stderr || run.stdout).trim()}`);
  if (run.stderr) process.stderr.write(run.stderr);
  process.stdout.write(run.stdout);
}

async function main() {
  const only = arg('--app');
  const apps = only ? [only] : prismaApps();
  if (only && !prismaApps().includes(only)) throw new Error(`no prisma schema for app ${only}`);
  for (const app of apps) {
    const url = arg('--database-url') || databaseUrlFor(app, Boolean(only));
    const applied = await migrateApp(app, url);
    const safeUrl = url.replace(/\/\/[^@/]*@/, '//');
    console.log(JSON.stringify({ msg: 'migrated', app, database: safeUrl, applied }));
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(`migrate failed: ${err?.message ?? err}`);
      process.exit(1);
    },
  );
}
