/** Tagged JSON: what plain JSON changes comes back as it was; data never passes for a tag. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeTagged, encodeTagged, MAX_DEPTH } from '../../src/protocol/tagged-json.js';

const roundTrip = (value: unknown): unknown => decodeTagged(encodeTagged(value));

describe('tagged JSON', () => {
  it('brings back what JSON would change', () => {
    const value = {
      url: new URL('https://a.example/p?q=1#f'),
      date: new Date(Date.UTC(2026, 5, 7, 8, 9, 10, 11)),
      nothing: undefined,
      numbers: [1, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.5],
      big: 12345678901234567890n,
      map: new Map<unknown, unknown>([
        ['k', new Date(0)],
        [1, { x: undefined }],
      ]),
      set: new Set(['a', 2]),
      bytes: new Uint8Array([0, 255, 7]),
      nested: { list: [undefined, null, 'x', { deep: new URL('urn:x') }] },
    };
    assert.deepStrictEqual(roundTrip(value), value);
    const invalid = roundTrip(new Date(Number.NaN));
    assert.ok(invalid instanceof Date && Number.isNaN(invalid.getTime()), 'an invalid Date stays an invalid Date');
  });

  it('keeps data that looks like a tag as data, and own __proto__ keys as keys', () => {
    const value = { $: 'D', v: 0, inner: { $: 'o', v: { $: 'u' } } };
    assert.deepStrictEqual(roundTrip(value), value);
    const proto = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    const back = roundTrip(proto) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(back), Object.prototype);
    assert.deepEqual(Object.keys(back), ['__proto__', 'a']);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('reads like JSON where JSON keeps things: toJSON, functions and symbols left out, instances as their fields', () => {
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const value = { p: new Point(1, 2), f: () => 1, s: Symbol('s'), j: { toJSON: () => 'as-json' }, list: [() => 1] };
    assert.deepStrictEqual(roundTrip(value), { p: { x: 1, y: 2 }, j: 'as-json', list: [null] });
    assert.equal(encodeTagged({ a: [1, 'b', null, true] }), '{"a":[1,"b",null,true]}', 'plain JSON stays plain');
  });

  it('refuses cycles, nesting past the bound, and text that is not tagged JSON', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => encodeTagged(cycle), TypeError);
    let deep: unknown = 1;
    for (let i = 0; i <= MAX_DEPTH; i++) deep = [deep];
    assert.throws(() => encodeTagged(deep), TypeError);
    assert.throws(() => decodeTagged(JSON.stringify(deep)), TypeError);
    assert.throws(() => decodeTagged('{"$":"?"}'), TypeError);
    assert.throws(() => decodeTagged('{"$":"U","v":3}'), TypeError);
    assert.throws(() => decodeTagged('{"$":"M","v":{}}'), TypeError);
    const shared = { a: 1 };
    assert.deepStrictEqual(roundTrip([shared, shared]), [{ a: 1 }, { a: 1 }], 'a value seen twice is not a cycle');
  });
});
