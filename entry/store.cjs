'use strict';
module.exports = require('./esm-only.cjs').load('store', () => require('../dist/store/index.js'));
