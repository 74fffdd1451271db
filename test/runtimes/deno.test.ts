/** The endpoint on Deno (`Deno.serve`): see suite.ts. */
import { fileURLToPath } from 'node:url';
import { runtimeSuite } from './suite.js';

runtimeSuite({
  name: 'Deno',
  binary: fileURLToPath(new URL('../../node_modules/deno/deno', import.meta.url)),
  args: ['run', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', '--allow-sys', '--allow-ffi'],
});
