#!/usr/bin/env node
// Generates every app's Prisma client (postinstall). `prisma generate` never runs the schema engine but
// insists one exists, so it gets a stub that exits 1 (see shared/prisma-offline.md).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, appPaths, prismaApps } from './apps.mjs';

const prismaBin = path.join(ROOT, 'node_modules/prisma/build/index.js');
if (!existsSync(prismaBin)) process.exit(0); // production install without dev dependencies
const stubDir = path.join(os.tmpdir(), 'platform-prisma-stub');
mkdirSync(stubDir, { recursive: true });
const stub = path.join(stubDir, 'schema-engine');
writeFileSync(stub, '#!/bin/sh\nexit 1\n');
chmodSync(stub, 0o755);

for (const app of process.argv.slice(2).length ? process.argv.slice(2) : prismaApps()) {
  const { schemaPath } = appPaths(app);
  const r = spawnSync(process.execPath, [prismaBin, 'generate', '--schema', schemaPath], {
    cwd: ROOT,
    env: { ...process.env, PRISMA_SCHEMA_ENGINE_BINARY: stub, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' },
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    process.stderr.write(r.stdout + r.stderr);
    console.error(`prisma generate failed for ${app}`);
    process.exit(1);
  }
  console.log(`prisma client generated for ${app}`);
}
