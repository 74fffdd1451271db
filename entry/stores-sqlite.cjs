'use strict';
module.exports = require('./esm-only.cjs').load('stores/sqlite', () => require('../dist/store/sqlite/index.js'));
