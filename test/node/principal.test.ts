/**
 * Principal binding from Node: `listen`/`nodeHandler` derive the principal from the
 * request; another principal's valid session ID gets the same 404 as an unknown one, on
 * the HTTP path and on the upgrade path.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createExampleServer } from '../../src/example/index.js';
import { listen, type Listener } from '../../src/node/index.js';
import { createEndpoint } from '../../src/server/index.js';
import { rawExchange } from '../helpers/raw-http.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'p', version: '0' } },
};

describe('principal binding from Node', () => {
  let listener: Listener;
  const seen: unknown[] = [];
  before(async () => {
    const endpoint = createEndpoint({ server: () => createExampleServer(), upgrade: { websocket: true } });
    listener = await listen(endpoint, {
      port: 0,
      principal: (req) => {
        const user = req.headers['x-user'];
        return typeof user === 'string' ? user : undefined;
      },
      authInfo: (req) => {
        seen.push(req.headers['x-user']);
        return { user: req.headers['x-user'] };
      },
    });
  });
  after(() => listener.close());

  const post = (user: string | undefined, body: unknown, sessionId?: string): Promise<Response> =>
    fetch(listener.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-11-25',
        ...(user ? { 'x-user': user } : {}),
        ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
      },
      body: JSON.stringify(body),
    });

  it('a session created by alice is invisible to bob and to anonymous requests: the same 404 as an unknown session', async () => {
    const init = await post('alice', INIT);
    assert.equal(init.status, 200);
    const sessionId = init.headers.get('mcp-session-id') as string;
    await init.body?.cancel();
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const own = await post('alice', list, sessionId);
    assert.equal(own.status, 200, 'alice reaches her session');
    await own.body?.cancel();
    const unknown = await post('bob', list, 'u'.repeat(32));
    const unknownBody = await unknown.json();
    for (const user of ['bob', undefined]) {
      const foreign = await post(user, list, sessionId);
      assert.equal(foreign.status, 404, `${user ?? 'anonymous'}: 404`);
      assert.deepEqual(await foreign.json(), unknownBody, `${user ?? 'anonymous'}: same body as an unknown session`);
    }
    assert.ok(seen.includes('alice') && seen.includes('bob'), 'authInfo was derived per request');
  });

  it('the upgrade path applies the same binding', async () => {
    const init = await post('alice', INIT);
    const sessionId = init.headers.get('mcp-session-id') as string;
    await init.body?.cancel();
    const handshake = (user: string, id: string): Promise<{ status: number; body: string }> =>
      rawExchange(
        listener.port,
        `GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:${listener.port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: mcp.v1\r\nX-User: ${user}\r\nMcp-Session-Id: ${id}\r\n\r\n`,
      );
    const foreign = await handshake('bob', sessionId);
    const unknown = await handshake('bob', 'u'.repeat(32));
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body, unknown.body, 'same answer as an unknown session');
    const own = await handshake('alice', sessionId);
    assert.notEqual(own.status, 404, 'alice’s own session is found (refused only for lacking an upgrade offer)');
  });
});
