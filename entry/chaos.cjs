'use strict';
module.exports = require('./esm-only.cjs').load('chaos', () => require('../dist/chaos/proxy.js'));
