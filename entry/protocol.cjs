'use strict';
module.exports = require('./esm-only.cjs').load('protocol', () => require('../dist/protocol/index.js'));
