/**
 * The per-event fast paths give exactly what the general code gives: the native UTF-8
 * count and the portable one agree, a one-line SSE payload encodes as the split would,
 * and a stream-made event ID parses back to its parts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { byteLength, countUtf8 } from '../../src/store/rules.js';
import { encodeSseEvent } from '../../src/protocol/sse.js';
import { eventIdPrefix, formatEventId, nextChain, chainSeed, tryParseEventId, tryParseEventIdIn } from '../../src/protocol/event-id.js';
import { createHash } from 'node:crypto';
import { isContinuityError } from '../../src/protocol/errors.js';

const TEXTS = ['', 'abc', 'é', '€', '😀', 'a😀b', '\uD800', '\uD800é', '\uD800\uD800', '\uDC00x', '😀\uD800', 'x'.repeat(20000) + '€'];

describe('byte counting', () => {
  for (const s of TEXTS) {
    it(`${JSON.stringify(s.slice(0, 12))} (${s.length} units)`, () => {
      const expected = Buffer.byteLength(s, 'utf8');
      assert.equal(countUtf8(s), expected, 'portable count');
      assert.equal(byteLength(s), expected, 'native count');
    });
  }
});

describe('SSE data fast path', () => {
  /** The general rule: one `data:` line per line of the payload. */
  const reference = (data: string): string =>
    `${data
      .split(/\r\n|\r|\n/)
      .map((l) => `data: ${l}\n`)
      .join('')}\n`;
  for (const data of ['', '{"jsonrpc":"2.0","method":"x","params":{"t":"a\\nb"}}', 'a\nb', 'a\r\nb', 'a\rb', '\n', 'x\r', 'é😀']) {
    it(JSON.stringify(data), () => {
      assert.equal(encodeSseEvent({ data }), reference(data));
      assert.equal(encodeSseEvent({ id: 'E.s.1.AAAAAAAAAAAAAAAA', data }), `id: E.s.1.AAAAAAAAAAAAAAAA\n${reference(data)}`);
    });
  }
});

describe('event IDs made by a stream', () => {
  it('prefix plus seq and chain equals formatEventId', () => {
    const chain = nextChain(chainSeed('EP', 'st'), 'payload');
    assert.equal(`${eventIdPrefix('EP', 'st')}7.${chain}`, formatEventId({ epoch: 'EP', stream: 'st', seq: 7, chain }));
  });
  it('the prefix is validated once', () => {
    assert.throws(
      () => eventIdPrefix('bad.epoch', 'st'),
      (e: unknown) => isContinuityError(e, 'event-id-invalid'),
    );
    assert.throws(
      () => eventIdPrefix('EP', 'x'.repeat(33)),
      (e: unknown) => isContinuityError(e, 'event-id-invalid'),
    );
  });
  it('the chain hashes previous ‖ NUL ‖ payload, as before', () => {
    for (const p of TEXTS) {
      const prev = 'AAAAAAAAAAAAAAAA';
      const expected = createHash('sha256').update(`${prev}\u0000${p}`, 'utf8').digest('base64url').slice(0, 16);
      assert.equal(nextChain(prev, p), expected);
    }
  });
});

describe('parsing IDs of a known stream', () => {
  const prefix = eventIdPrefix('EP', 'st');
  const ids = [
    'EP.st.1.AAAAAAAAAAAAAAAA',
    'EP.st.42.abcdefghijklmnop',
    'EP.st.0.AAAAAAAAAAAAAAAA',
    'EP.st.01.AAAAAAAAAAAAAAAA',
    'EP.st.1.AAAAAAAAAAAAAAA',
    'EP.st.1.AAAAAAAAAAAAAAAAA',
    'EP.st.1.AAAAAAAAAAAAAAA=',
    'EP.st.1',
    'EP.st.',
    'EP.st.1.A.B',
    'EP.st.99999999999999999.AAAAAAAAAAAAAAAA',
    'EP.other.1.AAAAAAAAAAAAAAAA',
    'XX.st.1.AAAAAAAAAAAAAAAA',
    'EP.st.1.AAAA AAAAAAAAAAAA',
    `EP.st.1.${'A'.repeat(200)}`,
    '',
    '5',
  ];
  for (const id of ids) {
    it(JSON.stringify(id.slice(0, 40)), () => {
      assert.deepEqual(tryParseEventIdIn(id, prefix, 'EP', 'st'), tryParseEventId(id));
    });
  }
});
