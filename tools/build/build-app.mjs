#!/usr/bin/env node
// Builds an app to dist/apps/<app>/: main.js, plus worker.js and admin.js where the app has them, and
// Prisma's query compiler (query_compiler_*.wasm) that they read (see bundle.mjs). The folder runs as a whole.
// esbuild bundles the app and the libs (resolving the @platform/* paths of tsconfig.base.json) and
// leaves node_modules as runtime dependencies, so the output runs with plain `node`.
import { bundle } from './bundle.mjs';
import { existsSync } from 'node:fs';
import path from 'node:path';

const app = process.argv[2];
if (!app || !existsSync(`apps/${app}/src/main.ts`)) {
  console.error('usage: node tools/build/build-app.mjs <app>');
  process.exit(2);
}
const entries = { main: 'src/main.ts', worker: 'src/worker.ts', admin: 'src/admin/cli.ts' };
const entryPoints = Object.fromEntries(
  Object.entries(entries)
    .map(([name, file]) => [name, path.join('apps', app, file)])
    .filter(([, file]) => existsSync(file)),
);
await bundle({ entryPoints, outdir: path.join('dist/apps', app) });
console.log(`built dist/apps/${app}: ${Object.keys(entryPoints).map((n) => `${n}.js`).join(', ')}`);
