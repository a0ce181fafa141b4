module.exports = require('./answers-global.cjs').setup;
