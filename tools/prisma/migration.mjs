#!/usr/bin/env node
// Creating and checking migrations without a shadow database: each app keeps the schema its last
// migration was made from (prisma/schema.snapshot.prisma) and new migrations are diffed against it.
//   node tools/prisma/migration.mjs new --app identity --name add_x   writes migrations/<ts>_add_x/migration.sql
//   node tools/prisma/migration.mjs check                              fails if a schema changed without a migration
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { diffSchemas } from './engine.mjs';
import { appPaths, prismaApps } from './apps.mjs';

const [cmd] = process.argv.slice(2);
const arg = (n) => {
  const i = process.argv.indexOf(n);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

async function pending(app) {
  const { schemaPath, snapshotPath } = appPaths(app);
  const toText = readFileSync(schemaPath, 'utf8');
  const fromText = existsSync(snapshotPath) ? readFileSync(snapshotPath, 'utf8') : null;
  const sql = await diffSchemas({ schemaPath, fromText, toText });
  return { sql: /^-- This is an empty migration\.?$/.test(sql) ? '' : sql, toText };
}

if (cmd === 'new') {
  const app = arg('--app');
  const name = (arg('--name') || 'migration').replace(/[^a-z0-9_]/gi, '_');
  if (!app) throw new Error('--app is required');
  const { migrationsDir, snapshotPath } = appPaths(app);
  const { sql, toText } = await pending(app);
  if (!sql) {
    console.log(`${app}: no schema change, no migration written`);
  } else {
    const stamp = new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const dir = path.join(migrationsDir, `${stamp}_${name}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'migration.sql'), sql + '\n');
    if (!existsSync(path.join(migrationsDir, 'migration_lock.toml'))) {
      writeFileSync(path.join(migrationsDir, 'migration_lock.toml'), 'provider = "postgresql"\n');
    }
    writeFileSync(snapshotPath, toText);
    console.log(`${app}: wrote ${path.relative(process.cwd(), dir)}/migration.sql`);
  }
} else if (cmd === 'check') {
  let dirty = false;
  for (const app of prismaApps()) {
    const { sql } = await pending(app);
    if (sql) {
      dirty = true;
      console.error(`${app}: schema.prisma has changes with no migration:\n${sql}`);
    }
  }
  if (dirty) process.exit(1);
  console.log('every schema change has its migration');
} else {
  console.error('usage: migration.mjs new --app APP --name NAME | check');
  process.exit(2);
}
process.exit(0);
