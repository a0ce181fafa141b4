module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'client',
  rootDir: __dirname,
  // One platform for the whole project (started by the spec files in turn).
  maxWorkers: 1,
};
