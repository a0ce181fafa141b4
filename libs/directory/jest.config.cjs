module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'directory',
  rootDir: __dirname,
};
