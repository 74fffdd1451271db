import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { byteLength } from '../../src/store/rules.js';

describe('store rules: byteLength is UTF-8 length', () => {
  for (const s of ['', 'abc', 'é', '€', '😀', 'a😀b', '\uD800', '\uD800é', '\uD800\uD800', '\uDC00x', '😀\uD800']) {
    it(`${JSON.stringify(s)}`, () => {
      assert.equal(byteLength(s), Buffer.byteLength(s, 'utf8'), 'matches Buffer.byteLength');
    });
  }
});
