module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'fuzz',
  rootDir: __dirname,
  // The fixed-seed run builds and starts every app, then sends a few thousand cases.
  testTimeout: 330000,
  maxWorkers: 1,
};
