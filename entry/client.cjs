'use strict';
module.exports = require('./esm-only.cjs').load('client', () => require('../dist/client/index.js'));
