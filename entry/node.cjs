'use strict';
module.exports = require('./esm-only.cjs').load('node', () => require('../dist/node/index.js'));
