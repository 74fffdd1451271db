'use strict';
module.exports = require('./esm-only.cjs').load('client/file-checkpoint', () => require('../dist/client/file-checkpoint.js'));
