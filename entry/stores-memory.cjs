'use strict';
module.exports = require('./esm-only.cjs').load('stores/memory', () => require('../dist/store/memory/index.js'));
