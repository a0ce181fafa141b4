module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'chaos',
  rootDir: __dirname,
  testTimeout: 300000,
  maxWorkers: 1,
};
