module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'cost-analysis',
  rootDir: __dirname,
};
