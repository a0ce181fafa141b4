#!/usr/bin/env node
// `npm run bench`: builds, then runs every benchmark of tools/bench (or the ones named).
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const here = path.dirname(new URL(import.meta.url).pathname);
const wanted = process.argv.slice(2);
const scripts = readdirSync(here, { recursive: true })
  .filter((f) => f.endsWith('.mjs') && !f.startsWith('lib') && f !== 'run.mjs' && statSync(path.join(here, f)).isFile() && !f.includes('/lib/'))
  .filter((f) => !wanted.length || wanted.some((w) => f.includes(w)));
spawnSync('node_modules/.bin/nx', ['run-many', '-t', 'build'], { stdio: 'inherit', env: { ...process.env, NX_DAEMON: 'false' } });
for (const s of scripts) {
  console.log(`\n== ${s}`);
  spawnSync(process.execPath, [path.join(here, s)], { stdio: 'inherit' });
}
