/**
 * A client process for the checkpoint-restore test:
 * `node --import tsx child-checkpoint-client.ts <url> <checkpoint>`. Connects the SDK
 * `Client` on our transport with a file checkpoint, prints what it learned at initialize
 * (`server <json>`), then calls the tool `hold` (which the test's server never finishes) and
 * prints `calling`; the test kills it with SIGKILL while the call is in flight.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, fileCheckpoint } from '../../src/client/index.js';

const [url, path] = process.argv.slice(2);
const transport = new ContinuityClientTransport(new URL(url as string), { checkpoint: fileCheckpoint(path as string), checkpointIntervalMs: 5 });
const client = new Client({ name: 'checkpointing-client', version: '1.0.0' });
await client.connect(transport);
const server = { capabilities: client.getServerCapabilities(), version: client.getServerVersion(), instructions: client.getInstructions() };
process.stdout.write(`server ${JSON.stringify(server)}\n`);
const call = client.callTool({ name: 'hold', arguments: { label: 'unfinished-call' } }, undefined, { timeout: 600_000 });
process.stdout.write('calling\n');
await call;
