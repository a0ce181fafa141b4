// One esbuild setup for everything this repository runs with plain node: the apps (build-app.mjs) and
// the TypeScript tools (fuzz, platformctl, the client generator). The libs (@platform/*, the paths of
// tsconfig.base.json) are always bundled, a missing one is a build error, and node_modules stay
// runtime dependencies.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const requireFromRoot = createRequire(path.join(root, 'package.json'));

/**
 * Packages whose import has no effect a bundle relies on: an import of one whose names the bundle does
 * not use is left out (esbuild keeps an external `require` otherwise, in case it has side effects).
 * A lib imports them for some of its exports, and a bundle that uses none of those (tree-shaken) does
 * not load them at start (issue #14): bullmq beside ioredis in libs/queue (identity, inventory and
 * opsflow use only the latter: ~140 ms of start, ~6 MB); express, jose, prom-client, re2js and zod in
 * libs/http, libs/auth and libs/query, which the workers import for runMain and onShutdownSignal only;
 * @grpc/grpc-js and protobufjs in libs/plugin, for a bundle that imports its types or errors only.
 * Never list a package imported for its side effects (`import 'x'`: it would be dropped).
 */
const SIDE_EFFECT_FREE = ['@grpc/grpc-js', 'protobufjs', 'bullmq', 'express', 'jose', 'prom-client', 're2js', 'zod', 'ajv', 'ajv-formats', 'ioredis', 'pino', 'pg', '@prisma/adapter-pg', 'rate-limiter-flexible'];

/**
 * Prisma's query compiler comes as a module exporting the WebAssembly as a 4.6 MB base64 string, which
 * a process then holds for its life, twice (the module's source and the string). The bundle gets a
 * module of the same shape instead, whose `wasm` reads the binary (written next to the bundle here) on
 * each access: the client decodes it with `Buffer.from(wasm, 'base64')`, which copies a Buffer as it is,
 * compiles it once, and nothing keeps the bytes (issue #14).
 */
const PRISMA_WASM = /^@prisma\/client\/runtime\/(query_compiler_\w+_bg\.\w+)\.wasm-base64\.js$/;
function prismaWasmFile(outDir) {
  return {
    name: 'prisma-wasm-file',
    setup(b) {
      b.onResolve({ filter: PRISMA_WASM }, (args) => ({ path: args.path, namespace: 'prisma-wasm-file' }));
      b.onLoad({ filter: /.*/, namespace: 'prisma-wasm-file' }, (args) => {
        const file = `${args.path.match(PRISMA_WASM)[1]}.wasm`;
        mkdirSync(outDir, { recursive: true });
        writeFileSync(path.join(outDir, file), Buffer.from(requireFromRoot(args.path).wasm, 'base64'));
        return {
          loader: 'js',
          contents: [
            `const { readFileSync } = require('node:fs');`,
            `const { join } = require('node:path');`,
            `Object.defineProperty(exports, 'wasm', { enumerable: true, get: () => readFileSync(join(__dirname, ${JSON.stringify(file)})) });`,
          ].join('\n'),
        };
      });
    },
  };
}

/**
 * Bundles `entryPoints` (esbuild's: a list or a name → file map) to `outfile` or `outdir`, CommonJS for
 * Node 20, with source maps. Prisma's query compiler, when bundled, is written beside as a .wasm file.
 */
export function bundle(o) {
  const outDir = path.resolve(root, o.outdir ?? path.dirname(o.outfile));
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
          b.onResolve({ filter: new RegExp(`^(${SIDE_EFFECT_FREE.map((p) => p.replace(/[/.]/g, '\\$&')).join('|')})$`) }, (args) => ({ path: args.path, external: true, sideEffects: false }));
        },
      },
      prismaWasmFile(outDir),
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
