/** The endpoint on Bun (`Bun.serve({ fetch })`): see suite.ts. */
import { fileURLToPath } from 'node:url';
import { runtimeSuite } from './suite.js';

runtimeSuite({ name: 'Bun', binary: fileURLToPath(new URL('../../node_modules/bun/bin/bun.exe', import.meta.url)), args: [] });
