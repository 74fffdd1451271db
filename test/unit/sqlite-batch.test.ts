/**
 * SQLite multi-row inserts and trimming by arithmetic, against the memory store as the
 * model: seeded batches of 1–100 events (across the multi-row chunk size), multi-byte
 * payloads, with and without a byte count carried, retention by count and by bytes.
 * After every batch both stores must agree on the head and on every retained event.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { memoryStore } from '../../src/store/memory/index.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import type { LogEvent, RetentionOptions } from '../../src/store/types.js';
import { prng } from '../helpers/prng.js';

const SEED = Number(process.env.SQLITE_BATCH_SEED ?? 12_012);

async function compare(retention: RetentionOptions, seed: number): Promise<void> {
  const random = prng(seed);
  const model = memoryStore({ retention });
  const sqlite = sqliteStore({ path: ':memory:', retention });
  try {
    const seedChain = chainSeed('E', 's');
    for (const store of [model, sqlite]) await store.log.openStream('sess', 's', seedChain, { kind: 'standalone', requestIds: [] });
    let seq = 0;
    let chain = seedChain;
    for (let batch = 0; batch < 40; batch++) {
      const n = 1 + Math.floor(random() * 100);
      const events: LogEvent[] = [];
      for (let i = 0; i < n; i++) {
        const payload = `{"n":${seq + 1},"text":"${'é'.repeat(Math.floor(random() * 40))}${'x'.repeat(Math.floor(random() * 200))}"}`;
        chain = nextChain(chain, payload);
        const event = { seq: ++seq, chain, payload, at: 1_000 + seq };
        events.push(random() < 0.5 ? { ...event, bytes: Buffer.byteLength(payload) } : event);
      }
      for (const store of [model, sqlite]) await store.log.append('sess', 's', events);
      const [a, b] = await Promise.all([model.log.head('sess', 's'), sqlite.log.head('sess', 's')]);
      assert.deepEqual(b, a, `head after batch ${batch} (seed ${seed})`);
      const strip = (es: LogEvent[]) => es.map(({ seq: q, chain: c, payload, at }) => ({ seq: q, chain: c, payload, at }));
      const [ra, rb] = await Promise.all([model.log.read('sess', 's', 0, 1e9), sqlite.log.read('sess', 's', 0, 1e9)]);
      assert.deepEqual(strip(rb), strip(ra), `events after batch ${batch} (seed ${seed})`);
    }
  } finally {
    await sqlite.close();
  }
}

describe('SQLite batches and trimming agree with the memory model', () => {
  it('retention by count', () => compare({ maxEvents: 150 }, SEED));
  it('retention by bytes', () => compare({ maxBytes: 20_000 }, SEED + 1));
  it('retention by count and bytes', () => compare({ maxEvents: 120, maxBytes: 15_000 }, SEED + 2));
  it('nothing trimmed', () => compare({ maxEvents: 1_000_000 }, SEED + 3));
});
