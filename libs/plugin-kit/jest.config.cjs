module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'plugin-kit',
  rootDir: __dirname,
};
