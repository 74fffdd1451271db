'use strict';
module.exports = require('./esm-only.cjs').load('fastify', () => require('../dist/frameworks/fastify.js'));
