/**
 * A client process for the restart test: `node --import tsx child-client.ts <url> <checkpoint> <expect>`.
 * Connects the SDK `Client` on our transport with a file checkpoint, prints one line per
 * logging notification (`seq <n> session <id>`), and exits (without ending the session)
 * once it has received <expect> of them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { ContinuityClientTransport, fileCheckpoint } from '../../src/client/index.js';

const [url, path, expectText] = process.argv.slice(2);
const expected = Number(expectText);
const transport = new ContinuityClientTransport(new URL(url as string), {
  checkpoint: fileCheckpoint(path as string),
  checkpointIntervalMs: 5,
  onDivergence: (r) => process.stdout.write(`divergence ${r.code}\n`),
});
const client = new Client({ name: 'child-client', version: '1.0.0' });
let received = 0;
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  const seq = (n.params.data as { seq?: number } | undefined)?.seq;
  process.stdout.write(`seq ${seq} session ${transport.sessionId}\n`);
  if (++received === expected) void client.close().then(() => process.exit(0));
});
await client.connect(transport);
process.stdout.write(`connected ${transport.sessionId}\n`);
if (expected === 0) {
  await client.close();
  process.exit(0);
}
