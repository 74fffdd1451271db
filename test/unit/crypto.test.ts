/**
 * The two `#crypto` implementations (node:crypto for Node, Bun and Deno; pure JS for
 * browsers and Workers) must give the same digests for every input, or a browser client
 * would refuse every stream a Node server chains. Tokens must be base64url of the asked size.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Crypto } from '../../src/protocol/crypto.js';
import * as nodeImpl from '../../src/platform/crypto-node.js';
import * as webImpl from '../../src/platform/crypto-web.js';
import { prng } from '../helpers/prng.js';

const node: Crypto = nodeImpl;
const web: Crypto = webImpl;

const ALPHABET = ['a', 'Z', '0', '"', '\n', '\u0000', 'é', '€', '中', '\u{1F600}', '\ud800', '\udc00'];

function text(random: () => number, units: number): string {
  let out = '';
  while (out.length < units) out += ALPHABET[Math.floor(random() * ALPHABET.length)];
  return out.slice(0, units);
}

describe('#crypto implementations', () => {
  it('give identical digests of strings, pairs and bytes, at every truncation', () => {
    const random = prng(27);
    for (const units of [0, 1, 2, 3, 55, 56, 63, 64, 65, 511, 4096, 16 * 1024, 16 * 1024 + 1, 100_000]) {
      const first = text(random, Math.floor(random() * 40));
      const second = text(random, units);
      for (const chars of [1, 16, 42, 43]) {
        assert.equal(web.sha256b64url(second, chars), node.sha256b64url(second, chars), `${units} units, ${chars} chars`);
        assert.equal(web.sha256b64urlOfPair(first, second, chars), node.sha256b64urlOfPair(first, second, chars), `pair, ${units} units`);
        const bytes = new TextEncoder().encode(second);
        assert.equal(web.sha256b64urlOfBytes(bytes, chars), node.sha256b64urlOfBytes(bytes, chars), `bytes, ${units} units`);
      }
    }
  });

  it('match a known SHA-256 vector', () => {
    // SHA-256("abc") = ba7816bf…15ad, base64url "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0".
    for (const impl of [node, web]) assert.equal(impl.sha256b64url('abc', 43), 'ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
  });

  it('make tokens of base64url, as long as the bytes need, and different each time', () => {
    for (const impl of [node, web]) {
      for (const bytes of [1, 2, 3, 6, 9, 12, 24]) {
        const a = impl.randomToken(bytes);
        assert.match(a, /^[A-Za-z0-9_-]+$/);
        assert.equal(a.length, Math.ceil((bytes * 4) / 3));
        if (bytes >= 6) assert.notEqual(impl.randomToken(bytes), a);
      }
    }
  });
});
