#!/usr/bin/env node
// platformctl (`npm run -s ctl -- <command>`, or the `platformctl` bin of this package): bundles
// tools/ctl/src/cli.ts with the libs it uses (as tools/build/build-app.mjs bundles an app) when a source
// is newer than the bundle, then runs it with plain node.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outfile = path.join(root, 'dist/tools/ctl/cli.js');

const newest = (dir) =>
  readdirSync(dir, { withFileTypes: true }).reduce((t, e) => {
    const p = path.join(dir, e.name);
    return Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }, 0);
const sources = ['tools/ctl/src', 'libs'].map((d) => path.join(root, d));
const stale = !existsSync(outfile) || Math.max(...sources.map(newest)) > statSync(outfile).mtimeMs;

if (stale) {
  await build({
    entryPoints: [path.join(root, 'tools/ctl/src/cli.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    packages: 'external',
    sourcemap: true,
    tsconfig: path.join(root, 'tsconfig.base.json'),
    logLevel: 'warning',
    plugins: [
      {
        name: 'platform-libs',
        setup(b) {
          b.onResolve({ filter: /^@platform\// }, (args) => {
            const file = path.resolve(root, 'libs', args.path.slice('@platform/'.length), 'src/index.ts');
            if (!existsSync(file)) return { errors: [{ text: `no lib for ${args.path} (${file})` }] };
            return { path: file };
          });
        },
      },
    ],
  });
}
const run = spawnSync(process.execPath, ['--enable-source-maps', outfile, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
