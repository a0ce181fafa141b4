module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'fuzz',
  rootDir: __dirname,
  // The fixed-seed run builds and starts every app, then sends a few thousand cases.
  // (the fixed-seed run's time budget is 480 s, fuzz.spec.ts)
  testTimeout: 660000,
  maxWorkers: 1,
};
