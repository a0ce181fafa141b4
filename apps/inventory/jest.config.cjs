module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'inventory',
  rootDir: __dirname,
};
