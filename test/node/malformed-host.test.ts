/**
 * A malformed Host (or any request that cannot become a web `Request`) is refused with a
 * 400, on the HTTP path and on the upgrade path, and the process lives on.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { rawExchange } from '../helpers/raw-http.js';

const BAD_HOSTS = ['', ' ', 'a b', '[', '[::1', '%zz', '<x>', 'a^b', 'a\\b', 'x/y', 'x?y', 'x#y', 'localhost:99999', 'localhost:abc'];

function body(json: string): { reason?: string } {
  return (JSON.parse(json) as { error: { data: { reason?: string } } }).error.data;
}

describe('node adapter: malformed Host', () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture({ upgrade: { websocket: true } });
  });
  after(() => f.close());

  for (const host of [...BAD_HOSTS, `u@localhost:PORT`]) {
    it(`GET with Host ${JSON.stringify(host)} → 400 request-malformed`, async () => {
      const h = host.replace('PORT', String(f.listener.port));
      const answer = await rawExchange(f.listener.port, `GET /mcp HTTP/1.1\r\nHost: ${h}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n`);
      assert.equal(answer.status, 400, answer.text);
      assert.equal(body(answer.body).reason, 'request-malformed');
    });

    it(`POST with Host ${JSON.stringify(host)} → 400 request-malformed`, async () => {
      const h = host.replace('PORT', String(f.listener.port));
      const json = '{"jsonrpc":"2.0","id":1,"method":"ping"}';
      const answer = await rawExchange(
        f.listener.port,
        `POST /mcp HTTP/1.1\r\nHost: ${h}\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\nConnection: close\r\n\r\n${json}`,
      );
      assert.equal(answer.status, 400, answer.text);
      assert.equal(body(answer.body).reason, 'request-malformed');
    });

    it(`WebSocket upgrade with Host ${JSON.stringify(host)} → 400 request-malformed`, async () => {
      const h = host.replace('PORT', String(f.listener.port));
      const answer = await rawExchange(
        f.listener.port,
        `GET /mcp HTTP/1.1\r\nHost: ${h}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp.v1\r\nMcp-Session-Id: x\r\n\r\n`,
      );
      assert.equal(answer.status, 400, answer.text);
      assert.equal(body(answer.body).reason, 'request-malformed');
    });
  }

  it('a method a web Request refuses (TRACE) → 405 method-not-allowed, not a crash', async () => {
    const answer = await rawExchange(f.listener.port, `TRACE /mcp HTTP/1.1\r\nHost: 127.0.0.1:${f.listener.port}\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 405, answer.text);
    assert.equal(body(answer.body).reason, 'method-not-allowed');
  });

  it('still serves a good request afterwards, and reported nothing as an internal error', async () => {
    const answer = await rawExchange(f.listener.port, `DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:${f.listener.port}\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 400, answer.text);
    assert.equal(body(answer.body).reason, 'session-required');
    assert.deepEqual(f.errors, []);
  });
});
