'use strict';
module.exports = require('./esm-only.cjs').load('stores/redis', () => require('../dist/store/redis/index.js'));
