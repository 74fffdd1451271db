'use strict';
module.exports = require('./esm-only.cjs').load('express', () => require('../dist/frameworks/express.js'));
