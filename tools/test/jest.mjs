// Runs one project's Jest suite: `node tools/test/jest.mjs libs/query [jest args]`.
// Results also go to tmp/test-results/<project>.json so `npm test` can print one closing summary.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const [dir, ...rest] = process.argv.slice(2);
if (!dir) {
  console.error('usage: node tools/test/jest.mjs <project dir> [jest args]');
  process.exit(2);
}
const resultsDir = path.resolve('tmp/test-results');
mkdirSync(resultsDir, { recursive: true });
// TEST_RESULTS_NAME: a second run of the same project (another configuration) keeps its own results file.
const name = dir.replace(/[\\/]/g, '-') + (process.env.TEST_RESULTS_NAME ? `-${process.env.TEST_RESULTS_NAME}` : '');
const args = [
  'node_modules/jest/bin/jest.js',
  '--config', path.join(dir, 'jest.config.cjs'),
  '--json', '--outputFile', path.join(resultsDir, `${name}.json`),
  ...(process.env.CI ? ['--ci'] : []),
  ...rest,
];
const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(run.status ?? 1);
