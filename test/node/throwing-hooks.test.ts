/**
 * Hooks that throw (a server factory, an `onError`, a principal function) are answered
 * with a coded 500 and never end the process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listen, type Listener } from '../../src/node/index.js';
import { createEndpoint } from '../../src/server/index.js';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } },
};

describe('throwing hooks', () => {
  let listener: Listener;
  let reported = 0;
  before(async () => {
    const endpoint = createEndpoint({
      server: () => {
        throw new Error('factory failed');
      },
      onError: () => {
        reported++;
        throw new Error('onError failed too');
      },
    });
    listener = await listen(endpoint, {
      port: 0,
      principal: (req) => {
        if (req.headers['x-explode'] !== undefined) throw new Error('principal failed');
        return undefined;
      },
    });
  });
  after(() => listener.close());

  const post = (headers: Record<string, string> = {}): Promise<Response> =>
    fetch(listener.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(INIT),
    });

  it('a throwing server factory and a throwing onError: 500 internal-error, and the server lives on', async () => {
    for (let i = 0; i < 3; i++) {
      const res = await post();
      assert.equal(res.status, 500);
      assert.equal(((await res.json()) as { error: { data: { reason: string } } }).error.data.reason, 'internal-error');
    }
    assert.ok(reported >= 3, 'onError was called (and threw)');
  });

  it('a throwing principal function: 500 internal-error', async () => {
    const res = await post({ 'x-explode': '1' });
    assert.equal(res.status, 500);
    assert.equal(((await res.json()) as { error: { data: { reason: string } } }).error.data.reason, 'internal-error');
  });
});
