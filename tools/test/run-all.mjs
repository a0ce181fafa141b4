// `npm test`: every test of every app and lib (through Nx), then one closing line with the totals.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';

const resultsDir = path.resolve('tmp/test-results');
rmSync(resultsDir, { recursive: true, force: true });

const env = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false' };
const steps = [
  ['node_modules/.bin/tsc', ['-p', 'tsconfig.json', '--noEmit']],
  ['node_modules/.bin/nx', ['run-many', '-t', 'lint', '--outputStyle=stream']],
  ['node_modules/.bin/nx', ['run-many', '-t', 'test', '--outputStyle=stream', '--parallel=1', ...process.argv.slice(2)]],
];
let failed = false;
for (const [cmd, args] of steps) {
  console.log(`\n$ ${path.basename(cmd)} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  if (r.status !== 0) {
    failed = true;
    if (cmd.endsWith('tsc') || cmd.endsWith('nx') && args.includes('lint')) console.error(`step failed: ${cmd} ${args.join(' ')}`);
  }
}

let passed = 0;
let failedTests = 0;
let suites = 0;
for (const f of readdirSync(resultsDir, { withFileTypes: true }).filter((d) => d.name.endsWith('.json'))) {
  const r = JSON.parse(readFileSync(path.join(resultsDir, f.name), 'utf8'));
  passed += r.numPassedTests;
  failedTests += r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0);
  suites += r.numTotalTestSuites;
}
console.log(`\n${suites} test files`);
console.log(`tests: ${passed} passed, ${failedTests} failed`);
process.exit(failed || failedTests > 0 || passed === 0 ? 1 : 0);
