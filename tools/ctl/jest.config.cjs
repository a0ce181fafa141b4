module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'ctl',
  rootDir: __dirname,
  // The CLI test starts one platform; the unit tests are quick.
  maxWorkers: 1,
};
