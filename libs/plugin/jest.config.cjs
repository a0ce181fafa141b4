module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'plugin-protocol',
  rootDir: __dirname,
};
