module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'queue',
  rootDir: __dirname,
};
