// Shared Jest settings: SWC transpiles TypeScript (no type-check in tests; `npm run typecheck` does
// that), and the @platform/* aliases resolve to the libs' sources.
const path = require('node:path');
const root = __dirname;

module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript', decorators: false }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  moduleFileExtensions: ['ts', 'js', 'json', 'mjs', 'cjs'],
  moduleNameMapper: {
    '^@platform/([a-z-]+)$': path.join(root, 'libs/$1/src/index.ts'),
  },
  testMatch: ['**/*.spec.ts'],
  // Every answer of every app checked against its operation's declared response (tools/test/answers).
  setupFilesAfterEnv: [path.join(root, 'tools/test/answers/answers-setup.ts')],
  globalSetup: path.join(root, 'tools/test/answers/answers-global-setup.cjs'),
  globalTeardown: path.join(root, 'tools/test/answers/answers-global-teardown.cjs'),
  testTimeout: 30000,
  maxWorkers: process.env.JEST_MAX_WORKERS || 2,
};
