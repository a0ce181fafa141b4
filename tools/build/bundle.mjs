// One esbuild setup for everything this repository runs with plain node: the apps (build-app.mjs) and
// the TypeScript tools (fuzz, platformctl, the client generator). The libs (@platform/*, the paths of
// tsconfig.base.json) are always bundled, a missing one is a build error, and node_modules stay
// runtime dependencies.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Bundles `entryPoints` (esbuild's: a list or a name → file map) to `outfile` or `outdir`, CommonJS for Node 20, with source maps. */
export function bundle(o) {
  return build({
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
    ...o,
  });
}

const newest = (dir) =>
  readdirSync(dir, { withFileTypes: true }).reduce((t, e) => {
    const p = path.join(dir, e.name);
    return Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }, 0);

/**
 * Bundles a tool's TypeScript entry (relative to the repository) to dist/ and runs it with this
 * process' arguments, exiting with its status. With `sources` (folders), it rebuilds only when one of
 * their files is newer than the bundle.
 */
export async function bundleAndRun(entry, outfile, { sources, cwd = root } = {}) {
  const out = path.join(root, outfile);
  const stale = !sources || !existsSync(out) || Math.max(...sources.map((d) => newest(path.join(root, d)))) > statSync(out).mtimeMs;
  if (stale) await bundle({ entryPoints: [path.join(root, entry)], outfile: out });
  const run = spawnSync(process.execPath, ['--enable-source-maps', out, ...process.argv.slice(2)], { cwd, stdio: 'inherit' });
  process.exit(run.status ?? 1);
}
