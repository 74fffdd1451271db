/**
 * A URL that answers 200 with something other than an MCP response (an HTML page, JSON
 * that does not parse, JSON without the request's answer), with the official SDK Client
 * on our transport: the request fails at once with `response-invalid`, naming what came
 * back. It used to be dropped, and the request waited for the caller's timeout.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport } from '../../src/client/index.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { within } from '../helpers/wait.js';

const ANSWERS: Record<string, [type: string, body: string, says: RegExp]> = {
  '/page': ['text/html', '<html>hello</html>', /HTTP 200 with Content-Type text\/html: neither JSON nor an SSE stream/],
  '/plain': ['text/plain', 'ok', /Content-Type text\/plain/],
  '/bad-json': ['application/json', '{oops', /application\/json that does not parse: "\{oops"/],
  '/other-id': ['application/json', '{"jsonrpc":"2.0","id":99,"result":{}}', /JSON without the answer to request 0/],
};

describe('a URL that is not an MCP endpoint', () => {
  let server: Server;
  let base: string;
  before(async () => {
    server = createServer((req, res) => {
      const answer = ANSWERS[req.url ?? ''];
      if (!answer) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': answer[0] }).end(answer[1]);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  after(() => server.close());

  for (const [path, [type, , says]] of Object.entries(ANSWERS)) {
    it(`200 ${type} (${path}): connect fails at once with response-invalid, not at the request timeout`, async () => {
      const client = new Client({ name: 'not-mcp-test', version: '0' });
      const transport = new ContinuityClientTransport(new URL(path, base));
      try {
        // The SDK's own timeout is beyond `within`'s deadline: only a prompt failure passes.
        const outcome = await within(
          client.connect(transport, { timeout: 60_000 }).then(
            () => undefined,
            (e: unknown) => e,
          ),
          'connect to settle',
        );
        assert.ok(isContinuityError(outcome, 'response-invalid'), `response-invalid, got ${String(outcome)}`);
        assert.match((outcome as Error).message, says);
      } finally {
        await client.close();
      }
    });
  }
});
