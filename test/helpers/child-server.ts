/**
 * A server process for restart tests: `node --import tsx child-server.ts <port> <store>`
 * where store is `memory` or `sqlite:PATH`. Prints `ready <url>` once listening.
 */
import { createEndpoint } from '../../src/server/index.js';
import { listen } from '../../src/node/index.js';
import { openStore } from '../../src/cli/serve.js';
import { createExampleServer } from '../../src/example/index.js';

const [portText, storeSpec = 'memory', retryText = '100'] = process.argv.slice(2);
const store = openStore(storeSpec);
const endpoint = createEndpoint({ server: () => createExampleServer(), store, retryMs: Number(retryText), keepAliveMs: 0 });
const listener = await listen(endpoint, { port: Number(portText) });
process.stdout.write(`ready ${listener.url.href}\n`);
