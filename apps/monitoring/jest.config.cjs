module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'monitoring',
  rootDir: __dirname,
};
