module.exports = require('./answers-global.cjs').teardown;
