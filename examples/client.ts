import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, fileCheckpoint, isCheckpointError } from 'mcp-continuity/client';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:3000/mcp');
const transport = new ContinuityClientTransport(url, {
  checkpoint: fileCheckpoint('./client.ckpt'), // survive a client restart (default: memory)
  onDivergence: (report) =>
    console.warn(
      `session replaced after ${report.code}: ${report.failedRequests} request(s) failed, ` +
        `detected in ${report.detectMs} ms, re-initialized in ${report.reinitializeMs} ms`,
    ),
});
const client = new Client({ name: 'my-app', version: '1.0.0' });
await client.connect(transport).catch((error: unknown) => {
  // A checkpoint that is corrupt or another server's is refused, and left as it is for you.
  if (isCheckpointError(error)) console.error(`${error.message}; unfinished: ${JSON.stringify(error.unfinished)}`);
  throw error;
});
// Also after a restart from the checkpoint: the Client sees what the server answered at initialize.
console.log(`server: ${client.getServerVersion()?.name}`);
// Calls the last run had in flight when it stopped: listed, never sent again (they may have run).
for (const r of transport.unfinishedRequests) console.warn(`unfinished from the last run: ${r.method} ${JSON.stringify(r.params)}`);

const { tools } = await client.listTools();
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`);
const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
if (result.isError) {
  // A tool's failure is a result, not an exception: say so, and exit non-zero.
  console.error(`add failed: ${JSON.stringify(result.content)}`);
  process.exitCode = 1;
} else {
  console.log(`add(2, 3) = ${JSON.stringify(result.content)}`);
}

// Ends the session on the server (DELETE), forgets the checkpoint, and lets the process exit.
await transport.terminateSession();
await client.close();
