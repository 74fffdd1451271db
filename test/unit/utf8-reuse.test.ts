/**
 * The stores copy a payload's UTF-8 from the chain hash's buffer instead of encoding it
 * again (`encodedUtf8`). What they keep must be exactly the payload's own UTF-8 whatever
 * the buffer holds: the payload just hashed, another one of the same length, one counted
 * but never hashed, a producer's wrong byte count, a payload too large for the buffer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodedUtf8, hashNextChain, utf8Length } from '../../src/protocol/chain-hash.js';
import { chainSeed } from '../../src/protocol/event-id.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { packBatch } from '../../src/store/sqlite/batches.js';
import type { LogEvent } from '../../src/store/types.js';
import type { Store } from '../../src/store/index.js';

const SEED = chainSeed('E', 's');
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
/** Two payloads of the same UTF-16 length and the same UTF-8 length, different bytes. */
const A = `{"a":"${'é'.repeat(300)}${'x'.repeat(4000)}"}`;
const B = `{"b":"${'ü'.repeat(300)}${'y'.repeat(4000)}"}`;

describe('encodedUtf8', () => {
  it('gives the UTF-8 of the payload last counted or hashed, and nothing for any other', () => {
    assert.equal(utf8Length(A), utf8(A).length);
    assert.deepEqual(Buffer.from(encodedUtf8(A) as Uint8Array), utf8(A));
    hashNextChain(SEED, B);
    assert.deepEqual(Buffer.from(encodedUtf8(B) as Uint8Array), utf8(B));
    assert.equal(encodedUtf8(A), undefined, 'same length, other content');
    // Below the size where the buffer is used, and past its end: nothing held.
    hashNextChain(SEED, 'short');
    assert.equal(encodedUtf8('short'), undefined);
    const huge = '中'.repeat(100_000);
    hashNextChain(SEED, huge);
    assert.equal(encodedUtf8(huge), undefined);
  });
});

/** Appends `payloads` (each counted or hashed first, in the order given by `prime`) and reads them back. */
async function roundTrip(store: Store, events: LogEvent[], prime: () => void): Promise<string[]> {
  await store.log.openStream('sess', 's', SEED, { kind: 'standalone', requestIds: [] });
  prime();
  await store.log.append('sess', 's', events);
  return (await store.log.read('sess', 's', 0, 100)).map((e) => e.payload);
}

function events(payloads: string[], bytes?: number[]): LogEvent[] {
  return payloads.map((payload, i) => ({ seq: i + 1, chain: `c${i + 1}`, payload, at: 1, ...(bytes ? { bytes: bytes[i] as number } : {}) }));
}

describe("stores keep a payload's own UTF-8 when the hash buffer holds another", () => {
  for (const [name, open] of [
    ['memory', () => memoryStore()],
    ['sqlite', () => sqliteStore({ path: ':memory:' })],
  ] as const) {
    it(`${name}: the payload just hashed, then one of the same length after another was hashed`, async () => {
      const store = open();
      try {
        assert.deepEqual(await roundTrip(store, events([A]), () => hashNextChain(SEED, A)), [A]);
        await store.log.append('sess', 's', [{ seq: 2, chain: 'c2', payload: B, at: 1, bytes: utf8(B).length }]);
        hashNextChain(SEED, A);
        await store.log.append('sess', 's', [{ seq: 3, chain: 'c3', payload: B, at: 1, bytes: utf8(B).length }]);
        assert.deepEqual(
          (await store.log.read('sess', 's', 0, 100)).map((e) => e.payload),
          [A, B, B],
        );
      } finally {
        await store.close();
      }
    });
  }

  it('sqlite rows: a wrong byte count is recounted, not copied short or long', () => {
    utf8Length(A);
    const counted = utf8(A).length;
    for (const wrong of [counted - 1, counted + 1]) {
      utf8Length(A);
      const batch = packBatch(events([A, B], [wrong, utf8(B).length]));
      assert.deepEqual(batch.payloads, Buffer.concat([utf8(A), utf8(B)]));
      assert.equal(batch.sizes, JSON.stringify([counted, utf8(B).length]));
    }
  });
});
