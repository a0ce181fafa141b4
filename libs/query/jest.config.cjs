module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'query',
  rootDir: __dirname,
};
