import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CHAIN_LENGTH,
  MAX_EVENT_ID_LENGTH,
  chainSeed,
  formatEventId,
  isEpoch,
  isStreamName,
  nextChain,
  parseEventId,
  STANDALONE_STREAM,
  streamStartId,
  tryParseEventId,
  type EventId,
} from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';
import { prng } from '../helpers/prng.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const CHAIN = 'AbCdEfGh-_012345';

function token(rand: () => number, min: number, max: number): string {
  const n = min + Math.floor(rand() * (max - min + 1));
  let s = '';
  for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return s;
}

function randomSeq(rand: () => number): number {
  switch (Math.floor(rand() * 4)) {
    case 0:
      return 1 + Math.floor(rand() * 1000);
    case 1:
      return 1 + Math.floor(rand() * 2 ** 32);
    case 2:
      return Number.MAX_SAFE_INTEGER - Math.floor(rand() * 1000);
    default:
      return 1 + Math.floor(rand() * (Number.MAX_SAFE_INTEGER - 1));
  }
}

function generated(count: number): EventId[] {
  const rand = prng(0xc0ffee);
  const out: EventId[] = [];
  for (let i = 0; i < count; i++) {
    out.push({ epoch: token(rand, 1, 43), stream: token(rand, 1, 32), seq: randomSeq(rand), chain: token(rand, 16, 16) });
  }
  // Boundaries: shortest and longest parts, smallest and largest seq.
  out.push({ epoch: 'a', stream: 'b', seq: 1, chain: CHAIN });
  // seq 0: the cursor before a stream's first event.
  out.push({ epoch: 'a', stream: 'b', seq: 0, chain: CHAIN });
  out.push({ epoch: 'E'.repeat(43), stream: 'S'.repeat(32), seq: Number.MAX_SAFE_INTEGER, chain: '_'.repeat(16) });
  out.push({ epoch: '-', stream: '_', seq: 2, chain: '-'.repeat(16) });
  out.push({ epoch: 'ep', stream: 'st', seq: 10, chain: CHAIN });
  return out;
}

function assertInvalid(fn: () => unknown, label: string): void {
  assert.throws(fn, (err: unknown) => isContinuityError(err, 'event-id-invalid'), `expected event-id-invalid for ${label}`);
}

describe('event-id: round trip', () => {
  const ids = generated(2000);

  it('parseEventId(formatEventId(x)) deep-equals x, and format(parse(s)) === s', () => {
    for (const id of ids) {
      const text = formatEventId(id);
      assert.deepEqual(parseEventId(text), id);
      assert.equal(formatEventId(parseEventId(text)), text);
      assert.deepEqual(tryParseEventId(text), id);
    }
  });

  it('has the shape <epoch>.<stream>.<seq>.<chain> with decimal seq', () => {
    assert.equal(formatEventId({ epoch: 'ep', stream: 'st', seq: 42, chain: CHAIN }), `ep.st.42.${CHAIN}`);
    assert.equal(formatEventId({ epoch: 'e', stream: 's', seq: Number.MAX_SAFE_INTEGER, chain: CHAIN }), `e.s.9007199254740991.${CHAIN}`);
  });

  it('every formatted ID is visible ASCII (0x21-0x7E) and at most 128 bytes', () => {
    for (const id of ids) {
      const text = formatEventId(id);
      assert.ok(Buffer.byteLength(text, 'utf8') <= MAX_EVENT_ID_LENGTH, text);
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        assert.ok(c >= 0x21 && c <= 0x7e, `char ${c} in ${text}`);
      }
    }
    const longest = formatEventId({ epoch: 'E'.repeat(43), stream: 'S'.repeat(32), seq: Number.MAX_SAFE_INTEGER, chain: CHAIN });
    assert.ok(longest.length <= MAX_EVENT_ID_LENGTH, `longest ID is ${longest.length} bytes`);
  });
});

describe('event-id: parseEventId rejects malformed input', () => {
  const good = `ep.st.7.${CHAIN}`;
  const cases: Array<[string, string]> = [
    ['empty', ''],
    ['over 128 bytes', `${'e'.repeat(43)}.${'s'.repeat(32)}.1.${CHAIN}${'x'.repeat(40)}`],
    ['129 chars', 'a'.repeat(129)],
    ['one part', 'abc'],
    ['three parts', `ep.7.${CHAIN}`],
    ['five parts', `ep.st.x.7.${CHAIN}`],
    ['trailing dot', `${good}.`],
    ['leading dot', `.${good}`],
    ['empty epoch', `.st.7.${CHAIN}`],
    ['empty stream', `ep..7.${CHAIN}`],
    ['empty seq', `ep.st..${CHAIN}`],
    ['empty chain', 'ep.st.7.'],
    ['leading zero seq', `ep.st.07.${CHAIN}`],
    ['seq 00', `ep.st.00.${CHAIN}`],
    ['seq 2^53', `ep.st.9007199254740992.${CHAIN}`],
    ['seq 2^53+1', `ep.st.9007199254740993.${CHAIN}`],
    ['seq 17 digits', `ep.st.10000000000000000.${CHAIN}`],
    ['seq very long', `ep.st.${'9'.repeat(40)}.${CHAIN}`],
    ['negative seq', `ep.st.-1.${CHAIN}`],
    ['plus seq', `ep.st.+1.${CHAIN}`],
    ['hex seq', `ep.st.0x1.${CHAIN}`],
    ['exponent seq', `ep.st.1e3.${CHAIN}`],
    ['letter seq', `ep.st.a.${CHAIN}`],
    ['seq with space', `ep.st. 1.${CHAIN}`],
    ['seq with trailing space', `ep.st.1 .${CHAIN}`],
    ['non-ASCII digit seq', `ep.st.\u0661.${CHAIN}`],
    ['chain too short', `ep.st.7.${CHAIN.slice(1)}`],
    ['chain too long', `ep.st.7.${CHAIN}A`],
    ['chain with +', `ep.st.7.${'+'.repeat(16)}`],
    ['chain with /', `ep.st.7.${'/'.repeat(16)}`],
    ['chain with =', `ep.st.7.${CHAIN.slice(0, 15)}=`],
    ['chain non-ASCII', `ep.st.7.${CHAIN.slice(0, 15)}\u00e9`],
    ['epoch with space', `e p.st.7.${CHAIN}`],
    ['stream with space', `ep.s t.7.${CHAIN}`],
    ['epoch non-ASCII', `\u00e9p.st.7.${CHAIN}`],
    ['stream non-ASCII', `ep.\u{1F600}.7.${CHAIN}`],
    ['epoch with CR', `e\rp.st.7.${CHAIN}`],
    ['epoch with LF', `e\np.st.7.${CHAIN}`],
    ['stream with CRLF', `ep.s\r\nt.7.${CHAIN}`],
    ['stream with NUL', `ep.s\u0000t.7.${CHAIN}`],
    ['chain with NUL', `ep.st.7.${CHAIN.slice(0, 15)}\u0000`],
    ['epoch with colon', `e:p.st.7.${CHAIN}`],
    ['stream with slash', `ep.s/t.7.${CHAIN}`],
    ['epoch too long (44)', `${'e'.repeat(44)}.st.7.${CHAIN}`],
    ['stream too long (33)', `ep.${'s'.repeat(33)}.7.${CHAIN}`],
    ['leading space', ` ${good}`],
    ['trailing space', `${good} `],
    ['trailing LF', `${good}\n`],
  ];

  for (const [label, raw] of cases) {
    it(`rejects ${label}`, () => {
      assertInvalid(() => parseEventId(raw), label);
      assert.equal(tryParseEventId(raw), undefined);
    });
  }

  it('accepts the sample used above, so the cases differ from it only by the defect', () => {
    assert.deepEqual(parseEventId(good), { epoch: 'ep', stream: 'st', seq: 7, chain: CHAIN });
    assert.equal(parseEventId(`${'e'.repeat(43)}.${'s'.repeat(32)}.1.${CHAIN}`).epoch.length, 43);
  });

  it('does not echo long attacker input in the message', () => {
    try {
      parseEventId(`${'x'.repeat(5000)}.st.1.${CHAIN}`);
      assert.fail('expected a throw');
    } catch (err) {
      assert.ok(isContinuityError(err, 'event-id-invalid'), `expected event-id-invalid, got ${String(err)}`);
      assert.ok(err.message.length < 200, `message length ${err.message.length}`);
    }
  });
});

describe('event-id: formatEventId rejects bad parts', () => {
  const base: EventId = { epoch: 'ep', stream: 'st', seq: 1, chain: CHAIN };
  const bad: Array<[string, Partial<EventId>]> = [
    ['empty epoch', { epoch: '' }],
    ['epoch with dot', { epoch: 'e.p' }],
    ['epoch with space', { epoch: 'e p' }],
    ['epoch with LF', { epoch: 'e\np' }],
    ['epoch non-ASCII', { epoch: '\u00e9' }],
    ['epoch 44 chars', { epoch: 'e'.repeat(44) }],
    ['empty stream', { stream: '' }],
    ['stream with dot', { stream: 's.t' }],
    ['stream with NUL', { stream: 's\u0000' }],
    ['stream 33 chars', { stream: 's'.repeat(33) }],
    ['seq -0.5', { seq: -0.5 }],
    ['seq -1', { seq: -1 }],
    ['seq 1.5', { seq: 1.5 }],
    ['seq NaN', { seq: Number.NaN }],
    ['seq Infinity', { seq: Number.POSITIVE_INFINITY }],
    ['seq 2^53', { seq: 2 ** 53 }],
    ['chain 15 chars', { chain: CHAIN.slice(1) }],
    ['chain 17 chars', { chain: `${CHAIN}A` }],
    ['chain with .', { chain: `${CHAIN.slice(0, 15)}.` }],
    ['chain with +', { chain: `${CHAIN.slice(0, 15)}+` }],
  ];
  for (const [label, patch] of bad) {
    it(`rejects ${label}`, () => assertInvalid(() => formatEventId({ ...base, ...patch }), label));
  }

  it('isEpoch / isStreamName enforce length limits 43 / 32', () => {
    assert.equal(isEpoch('e'.repeat(43)), true);
    assert.equal(isEpoch('e'.repeat(44)), false);
    assert.equal(isStreamName('s'.repeat(32)), true);
    assert.equal(isStreamName('s'.repeat(33)), false);
    assert.equal(isEpoch(''), false);
    assert.equal(isStreamName(''), false);
  });
});

describe('event-id: chain', () => {
  const chainRe = new RegExp(`^[A-Za-z0-9_-]{${CHAIN_LENGTH}}$`);

  it('chainSeed is deterministic, well-formed and differs across epochs and streams', () => {
    const seeds = new Set<string>();
    for (const epoch of ['e1', 'e2', 'E1', 'ab']) {
      for (const stream of ['s1', 's2', 'S1', 'c']) {
        const seed = chainSeed(epoch, stream);
        assert.match(seed, chainRe);
        assert.equal(chainSeed(epoch, stream), seed);
        seeds.add(seed);
      }
    }
    assert.equal(seeds.size, 16);
    // The separator keeps (epoch, stream) unambiguous.
    assert.notEqual(chainSeed('a', 'bc'), chainSeed('ab', 'c'));
    assert.notEqual(chainSeed('a', 'b'), chainSeed('b', 'a'));
  });

  it('nextChain is deterministic and well-formed', () => {
    const seed = chainSeed('ep', 'st');
    const c = nextChain(seed, '{"jsonrpc":"2.0"}');
    assert.equal(nextChain(seed, '{"jsonrpc":"2.0"}'), c);
    assert.match(c, chainRe);
    assert.match(nextChain(seed, ''), chainRe);
    // A chain value is a valid event-ID part.
    assert.equal(parseEventId(formatEventId({ epoch: 'ep', stream: 'st', seq: 1, chain: c })).chain, c);
  });

  it('nextChain depends on the previous chain and on the payload', () => {
    const a = chainSeed('ep', 'a');
    const b = chainSeed('ep', 'b');
    assert.notEqual(nextChain(a, 'x'), nextChain(b, 'x'));
    assert.notEqual(nextChain(a, 'x'), nextChain(a, 'y'));
    assert.notEqual(nextChain(a, ''), nextChain(a, ' '));
    assert.notEqual(nextChain(a, 'x'), a);
  });

  function chainOver(seed: string, payloads: readonly string[]): string {
    return payloads.reduce((c, p) => nextChain(c, p), seed);
  }

  it('a chain over a sequence changes if any payload changes, or two are swapped', () => {
    const seed = chainSeed('ep', 'st');
    const payloads = Array.from({ length: 20 }, (_, i) => JSON.stringify({ jsonrpc: '2.0', method: 'n', params: { i } }));
    const base = chainOver(seed, payloads);
    assert.equal(chainOver(seed, payloads), base);
    for (let i = 0; i < payloads.length; i++) {
      const changed = [...payloads];
      changed[i] = `${payloads[i]} `;
      assert.notEqual(chainOver(seed, changed), base, `changed payload ${i}`);
    }
    for (let i = 0; i + 1 < payloads.length; i++) {
      const swapped = [...payloads];
      [swapped[i], swapped[i + 1]] = [payloads[i + 1] as string, payloads[i] as string];
      assert.notEqual(chainOver(seed, swapped), base, `swapped ${i} and ${i + 1}`);
    }
    assert.notEqual(chainOver(seed, payloads.slice(0, -1)), base, 'dropped last');
    assert.notEqual(chainOver(seed, payloads.slice(1)), base, 'dropped first');
    assert.notEqual(chainOver(chainSeed('ep2', 'st'), payloads), base, 'other epoch');
  });
});

describe("event-id: the cursor before a stream's first event", () => {
  it('streamStartId is <epoch>.<stream>.0.<seed>, and parses back', () => {
    const id = streamStartId('ep', STANDALONE_STREAM);
    assert.equal(id, `ep.0.0.${chainSeed('ep', '0')}`);
    assert.deepEqual(parseEventId(id), { epoch: 'ep', stream: '0', seq: 0, chain: chainSeed('ep', '0') });
  });
});
