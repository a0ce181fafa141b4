module.exports = {
  ...require('../../jest.preset.cjs'),
  displayName: 'telemetry',
  rootDir: __dirname,
};
