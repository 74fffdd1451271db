'use strict';
module.exports = require('./esm-only.cjs').load('server', () => require('../dist/server/index.js'));
