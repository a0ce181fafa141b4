// The apps that own a Prisma schema, and where their files are.
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function prismaApps() {
  const appsDir = path.join(ROOT, 'apps');
  if (!existsSync(appsDir)) return [];
  return readdirSync(appsDir)
    .filter((name) => existsSync(path.join(appsDir, name, 'prisma/schema.prisma')))
    .sort();
}

export function appPaths(app) {
  const prismaDir = path.join(ROOT, 'apps', app, 'prisma');
  return {
    prismaDir,
    schemaPath: path.join(prismaDir, 'schema.prisma'),
    snapshotPath: path.join(prismaDir, 'schema.snapshot.prisma'),
    migrationsDir: path.join(prismaDir, 'migrations'),
  };
}

export function defaultDatabaseUrl(app) {
  return `postgresql://postgres@127.0.0.1:5432/platform_${app.replace(/-/g, '_')}`;
}

/** DATABASE_URL_<APP> wins, then DATABASE_URL when one app is migrated, then the default. */
export function databaseUrlFor(app, single) {
  const key = `DATABASE_URL_${app.replace(/-/g, '_').toUpperCase()}`;
  return process.env[key] || (single && process.env.DATABASE_URL) || defaultDatabaseUrl(app);
}
