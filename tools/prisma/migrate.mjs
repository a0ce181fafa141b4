#!/usr/bin/env node
// Applies migrations (creating the database if it does not exist). Idempotent.
//   node tools/prisma/migrate.mjs                      every app, each to its DATABASE_URL_<APP> or default
//   node tools/prisma/migrate.mjs --app identity [--database-url URL]
import pg from 'pg';
import { applyMigrations } from './engine.mjs';
import { appPaths, databaseUrlFor, prismaApps } from './apps.mjs';

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
  return applyMigrations({ schemaPath, migrationsDir, databaseUrl });
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
