/**
 * The client's chain hash (reused buffer) must give exactly `nextChain`'s value for every
 * payload: either side of each threshold, any UTF-16 content, any previous value.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashNextChain, utf8Length } from '../../src/protocol/chain-hash.js';
import { byteLength } from '../../src/protocol/utf8.js';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { prng } from '../helpers/prng.js';

const SEED = chainSeed('q3Zt9xKc0bYw_1-A', '1');

/** `units` UTF-16 units drawn from `alphabet` (strings, so astral pairs stay whole unless split on purpose). */
function text(random: () => number, alphabet: readonly string[], units: number): string {
  let out = '';
  while (out.length < units) out += alphabet[Math.floor(random() * alphabet.length)];
  return out.slice(0, units);
}

const ASCII = ['a', 'Z', '0', '"', '{', '}', ':', ',', ' ', '\\', '\n', '\u0000'];
const MIXED = [...ASCII, 'é', 'ß', '€', '中', '\u{1F600}', '\u00ff', '\u0100', '\ufffd'];
const BROKEN = [...MIXED, '\ud800', '\udc00', '\udbff'];

describe('hashNextChain', () => {
  it('equals nextChain either side of each size threshold', () => {
    const random = prng(12);
    for (const units of [0, 1, 100, 511, 512, 513, 4096, 16 * 1024, 64 * 1024, 256 * 1024 - 200, 256 * 1024, 256 * 1024 + 1, 300_000]) {
      for (const alphabet of [ASCII, MIXED, BROKEN]) {
        const payload = text(random, alphabet, units);
        assert.equal(hashNextChain(SEED, payload), nextChain(SEED, payload), `${units} units`);
      }
    }
  });

  it('equals nextChain when the UTF-8 outgrows the buffer though the UTF-16 length fits', () => {
    // 3 bytes per unit: 100,000 units are 300,000 bytes, beyond the 256 KiB buffer.
    for (const ch of ['€', '中', '\ud800']) {
      const payload = ch.repeat(100_000);
      assert.equal(hashNextChain(SEED, payload), nextChain(SEED, payload));
    }
  });

  it('equals nextChain for any previous value (an integer ID, non-ASCII, long, with NUL)', () => {
    const payload = text(prng(3), MIXED, 2000);
    for (const previous of ['', '42', SEED, 'é', 'a\u0000b', 'x'.repeat(128), 'x'.repeat(129), '\ud800', 'z'.repeat(5000)]) {
      assert.equal(hashNextChain(previous, payload), nextChain(previous, payload), JSON.stringify(previous.slice(0, 8)));
    }
  });

  it('equals nextChain along a chain of random events, the buffer reused between them', () => {
    const random = prng(99);
    let a = SEED;
    let b = SEED;
    for (let i = 0; i < 300; i++) {
      const payload = text(random, random() < 0.5 ? ASCII : BROKEN, Math.floor(random() * 6000));
      a = nextChain(a, payload);
      b = hashNextChain(b, payload);
      assert.equal(b, a, `event ${i}`);
    }
  });

  it('utf8Length equals byteLength, and the hash after it reuses nothing stale', () => {
    const random = prng(7);
    const payloads: string[] = [];
    for (const units of [0, 511, 512, 4096, 64 * 1024, 256 * 1024, 256 * 1024 + 1, 100_000]) {
      for (const alphabet of [ASCII, MIXED, BROKEN]) payloads.push(text(random, alphabet, units));
    }
    for (const payload of payloads) assert.equal(utf8Length(payload), byteLength(payload));
    // Counted, then another payload hashed, then the counted one hashed: each hash is its own.
    for (let i = 0; i + 1 < payloads.length; i++) {
      const a = payloads[i] as string;
      const b = payloads[i + 1] as string;
      utf8Length(a);
      assert.equal(hashNextChain(SEED, b), nextChain(SEED, b));
      assert.equal(hashNextChain('x'.repeat(128), a), nextChain('x'.repeat(128), a));
      // An equal payload that is another string object.
      const copy = `${a.slice(0, 1)}${a.slice(1)}`;
      utf8Length(copy);
      assert.equal(hashNextChain(SEED, a), nextChain(SEED, a));
    }
  });
});
