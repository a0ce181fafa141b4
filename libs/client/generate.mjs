#!/usr/bin/env node
// `npm run client:generate [-- --endpoint URL]`: bundles libs/client/scripts/generate.ts (and the libs it
// uses, as tools/build/build-app.mjs bundles an app) and runs it with plain node.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const outfile = path.join(root, 'dist/tools/client-gen/generate.js');
await build({
  entryPoints: [path.join(root, 'libs/client/scripts/generate.ts')],
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
const run = spawnSync(process.execPath, ['--enable-source-maps', outfile, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
