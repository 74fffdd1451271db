import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { memoryStore } from '../../src/store/memory.js';
import type { LogEvent, StreamInfo } from '../../src/store/types.js';
import { storeContract } from './contract.js';

storeContract('memory', (o) => memoryStore(o));

const INFO: StreamInfo = { kind: 'standalone', requestIds: [] };

/** Contiguous, chained events after `from`, with the given payloads. */
function events(seed: string, from: number, payloads: readonly string[]): LogEvent[] {
  let chain = seed;
  return payloads.map((payload, i) => ({ seq: from + i + 1, chain: (chain = nextChain(chain, payload)), payload, at: 1 }));
}

describe('memory store: what it holds', () => {
  it('a trimmed event is released at once, not when the trimmed prefix is compacted', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const store = memoryStore({ retention: { maxEvents: 2 } });
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const all = events(seed, 0, ['a', 'b', 'c', 'd', 'e', 'f']);
    const first = new WeakRef(all[0] as LogEvent);
    for (const e of all) await store.log.append('S', 'st', [e]);
    all.length = 0;
    // A WeakRef's target stays alive until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    assert.equal(first.deref(), undefined, 'the trimmed event is still reachable');
    assert.deepEqual((await store.log.read('S', 'st', 0, 10)).map((e) => e.payload), ['e', 'f']);
    await store.close();
  });

  it('large payloads read back exactly, a lone surrogate included', async () => {
    const store = memoryStore();
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const payloads = ['\u{1F600}é'.repeat(2_000), `${'x'.repeat(5_000)}\ud800${'y'.repeat(5_000)}`, 'z'.repeat(1_023), 'w'.repeat(1_024)];
    const written = events(seed, 0, payloads);
    await store.log.append('S', 'st', written);
    const read = await store.log.read('S', 'st', 0, 10);
    assert.deepEqual(read.map((e) => [e.seq, e.chain, e.payload, e.at]), written.map((e) => [e.seq, e.chain, e.payload, e.at]));
    assert.deepEqual(await store.log.read('S', 'st', 1, 1).then((r) => r.map((e) => e.payload)), [payloads[1]]);
    await store.close();
  });
});

describe('memory store: a wrong byte count from the caller', () => {
  it('large payloads still read back exactly when `bytes` is short, long, fractional, infinite or not a number', async () => {
    const store = memoryStore();
    const seed = chainSeed('e', 'st');
    await store.log.openStream('S', 'st', seed, INFO);
    const payload = '\u{1F600}é'.repeat(1_000);
    const written = events(seed, 0, [payload, payload, payload, payload, payload, payload]).map((e, i) => ({ ...e, bytes: [10, 100_000, Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY][i] }));
    await store.log.append('S', 'st', written);
    const read = await store.log.read('S', 'st', 0, 10);
    assert.deepEqual(read.map((e) => e.payload), [payload, payload, payload, payload, payload, payload]);
    await store.close();
  });
});
