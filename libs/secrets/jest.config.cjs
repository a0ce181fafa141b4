module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'secrets',
  rootDir: __dirname,
};
