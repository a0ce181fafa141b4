module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'opsflow',
  rootDir: __dirname,
};
