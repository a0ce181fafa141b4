module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'errors',
  rootDir: __dirname,
};
