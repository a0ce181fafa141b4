import path from 'node:path';
import { buildSync } from 'esbuild';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * An app's entry (`apps/<app>/src/main.ts`, `worker.ts`) bundled the way the build bundles it (every
 * package external), to `outfile`, for a test that runs it as its own process.
 */
export function bundleEntry(entryFile: string, outfile: string): string {
  buildSync({
    entryPoints: [entryFile],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    packages: 'external',
    tsconfig: path.join(ROOT, 'tsconfig.base.json'),
    nodePaths: [path.join(ROOT, 'node_modules')],
    logLevel: 'error',
  });
  return outfile;
}
