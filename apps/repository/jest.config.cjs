module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'repository',
  rootDir: __dirname,
};
