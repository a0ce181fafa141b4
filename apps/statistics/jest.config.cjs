module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'statistics',
  rootDir: __dirname,
};
