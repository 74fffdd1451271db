/**
 * The verifier decides the next event in line by one comparison with the only ID it may
 * carry; everything near that ID, but not it, must still get the full path's verdict.
 * Payloads here are large and non-ASCII too, so the chain goes through the reused buffer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chainSeed, formatEventId, nextChain } from '../../src/protocol/event-id.js';
import { CONTINUOUS, createStreamVerifier, type EventVerdict, type StreamCheckpoint } from '../../src/client/verifier.js';

const EPOCH = 'q3Zt9xKc0bYw_1-A';
const STREAM = '7';

function payload(n: number): string {
  // Around the buffer's threshold and well past it; multi-byte, astral and lone-surrogate content.
  const pad = ['é€中\u{1F600}', 'x', '\ud800y'][n % 3]?.repeat(150 + 400 * (n % 4)) ?? '';
  return JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { n, pad } } });
}

interface Ev {
  id: string;
  data: string;
  chain: string;
}
const H: Ev[] = [];
let chain = chainSeed(EPOCH, STREAM);
for (let seq = 1; seq <= 12; seq++) {
  const data = payload(seq);
  chain = nextChain(chain, data);
  H.push({ id: formatEventId({ epoch: EPOCH, stream: STREAM, seq, chain }), data, chain });
}
const at = (seq: number): Ev => H[seq - 1] as Ev;
const checkpoint = (seq: number): StreamCheckpoint => ({ stream: STREAM, lastId: at(seq).id, scheme: 'chained', seq, chain: at(seq).chain });

/** A verifier that has checked 1..5 continuously (from the start, so both ways in are covered below). */
function afterFive(resumed: boolean) {
  const v = resumed ? createStreamVerifier({ checkpoint: checkpoint(5), epoch: EPOCH }) : createStreamVerifier({ epoch: EPOCH });
  if (!resumed) for (let seq = 1; seq <= 5; seq++) assert.equal(v.check(at(seq).id, at(seq).data), CONTINUOUS);
  return v;
}

const six = at(6);
const NEAR_MISSES: Array<[name: string, id: string, data: string, expect: Partial<EventVerdict> & Record<string, unknown>]> = [
  ['a leading zero on the right seq', `${EPOCH}.${STREAM}.06.${six.chain}`, six.data, { kind: 'foreign-stream', part: 'scheme' }],
  ['a sign on the right seq', `${EPOCH}.${STREAM}.+6.${six.chain}`, six.data, { kind: 'foreign-stream', part: 'scheme' }],
  ['an exponent for the right seq', `${EPOCH}.${STREAM}.6e0.${six.chain}`, six.data, { kind: 'foreign-stream', part: 'scheme' }],
  ['a character after the right chain', `${six.id}A`, six.data, { kind: 'foreign-stream', part: 'scheme' }],
  ['the right chain cut short', six.id.slice(0, -1), six.data, { kind: 'foreign-stream', part: 'scheme' }],
  [
    'the right seq and chain in another epoch',
    formatEventId({ epoch: 'Zz9yXw8vUt7sRq6P', stream: STREAM, seq: 6, chain: six.chain }),
    six.data,
    { kind: 'foreign-stream', part: 'epoch' },
  ],
  [
    'the right seq and chain on another stream',
    formatEventId({ epoch: EPOCH, stream: '8', seq: 6, chain: six.chain }),
    six.data,
    { kind: 'foreign-stream', part: 'stream' },
  ],
  ['the right ID, one character of the data changed', six.id, six.data.replace('"n":6', '"n":7'), { kind: 'chain-mismatch', seq: 6, actualChain: six.chain }],
  ['the right ID, one non-ASCII character of the data changed', six.id, six.data.replace('é', 'è'), { kind: 'chain-mismatch', seq: 6 }],
  [
    'a chain differing only in case',
    `${EPOCH}.${STREAM}.6.${six.chain.toLowerCase() === six.chain ? six.chain.toUpperCase() : six.chain.toLowerCase()}`,
    six.data,
    { kind: 'chain-mismatch', seq: 6 },
  ],
  ['the next event’s ID with this data', at(7).id, six.data, { kind: 'gap', expectedSeq: 6, actualSeq: 7 }],
];

describe('verifier: the next event in line, and everything near it', () => {
  for (const resumed of [false, true]) {
    const how = resumed ? 'resumed from a checkpoint' : 'from the first event';
    it(`a run of large, non-ASCII events is continuous (${how}), and the checkpoint follows`, () => {
      const v = afterFive(resumed);
      for (let seq = 6; seq <= 12; seq++) {
        assert.equal(v.check(at(seq).id, at(seq).data), CONTINUOUS, `event ${seq}`);
        assert.deepEqual(v.checkpoint(), checkpoint(seq));
      }
    });
    // Resumed, the repeat of the last event is the boundary replay; later, a duplicate. Both are dropped.
    const repeat = ['the last event again', at(5).id, at(5).data, { kind: resumed ? 'boundary-replay' : 'duplicate' }] as const;
    for (const [name, id, data, expect] of [...NEAR_MISSES, repeat]) {
      it(`${name} (${how}) → ${expect.kind}`, () => {
        const v = afterFive(resumed);
        const verdict = v.check(id, data) as unknown as Record<string, unknown>;
        for (const [key, value] of Object.entries(expect)) assert.deepEqual(verdict[key], value, key);
        assert.deepEqual(v.checkpoint(), checkpoint(5), 'nothing advanced');
        if (expect.kind !== 'duplicate' && expect.kind !== 'boundary-replay')
          assert.equal(v.check(six.id, six.data), verdict as unknown as EventVerdict, 'terminal');
        else assert.equal(v.check(six.id, six.data), CONTINUOUS, 'a dropped duplicate leaves the stream where it was');
      });
    }
  }
});
