module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'plugin',
  rootDir: __dirname,
};
