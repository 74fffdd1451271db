/**
 * A newer GET takes a stream over from the reader it has, over real sockets. A reader that
 * is keeping up ends normally (the response completes): a client that raced two GETs at
 * connect (`@ai-sdk/mcp` does) then keeps one, where an error made each reconnect and take
 * the other over, once a retry interval, for as long as the session lived.
 */
import assert from 'node:assert/strict';
import { request, type IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { initialize, rpc, send, sessionHeaders, type Handshake } from '../helpers/sse-client.js';
import { waitFor, within } from '../helpers/wait.js';

interface OpenGet {
  res: IncomingMessage;
  text: () => string;
  /** 'end' once the response completed, 'error' if the connection broke under it. */
  outcome: Promise<'end' | 'error'>;
}

function openGet(url: URL, headers: Record<string, string>): Promise<OpenGet> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { ...headers, accept: 'text/event-stream' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      const outcome = new Promise<'end' | 'error'>((settle) => {
        res.once('end', () => settle('end'));
        res.once('error', () => settle('error'));
        res.once('aborted', () => settle('error'));
      });
      resolve({ res, text: () => text, outcome });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a GET taken over by a newer GET', () => {
  let f: Fixture;
  let h: Handshake;
  before(async () => {
    f = await startFixture();
    h = await initialize(f.url);
    assert.equal((await send(f.url, { body: rpc('resources/subscribe', { uri: 'test://watched-resource' }), headers: sessionHeaders(h) })).status, 200);
  });
  after(() => f.close());

  it('a reader keeping up ends normally, and the newer one gets what follows', async () => {
    const first = await openGet(f.url, sessionHeaders(h));
    assert.equal(first.res.statusCode, 200);
    const second = await openGet(f.url, sessionHeaders(h));
    assert.equal(second.res.statusCode, 200);
    assert.equal(await within(first.outcome, 'the first GET to finish'), 'end', 'the response completed, not cut');
    // Notifications unrelated to a request travel on the GET stream: the newer reader has it.
    assert.equal((await send(f.url, { body: rpc('tools/call', { name: 'update_watched_resource', arguments: {} }), headers: sessionHeaders(h) })).status, 200);
    await waitFor(() => second.text().includes('notifications/resources/updated'), 'the update on the newer GET');
    assert.ok(!first.text().includes('notifications/resources/updated'), 'nothing on the reader taken over');
    second.res.destroy();
  });
});
