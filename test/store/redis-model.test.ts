/**
 * The Redis store against the memory store as a model: the same seeded random appends
 * (batch sizes, multi-byte payloads, clock jumps, retention by count, bytes and age) must
 * leave the same heads and the same retained events. Catches what a hand-written case
 * misses in the script's arithmetic (byte binary search, age walk, trim boundaries).
 * Replay a failure with SEED=<n>.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '@redis/client';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import type { LogEvent, RetentionOptions, Store } from '../../src/store/types.js';
import { prng } from '../helpers/prng.js';
import { randomPrefix, redisOrSkip, SHARED_REDIS_URL } from '../helpers/redis.js';

const available = await redisOrSkip('the Redis model test');
const SEED = Number(process.env.SEED ?? 20261130);
const T0 = 1_700_000_000_000;
const PIECES = ['a', 'bc', '\u00e9', '\u4e16', '\u{1F600}', '"', '\\n'];

describe('redis store matches the memory model', { skip: !available }, () => {
  const prefixes: string[] = [];
  after(async () => {
    const client = createClient({ url: SHARED_REDIS_URL });
    client.on('error', () => {});
    await client.connect();
    try {
      for (const prefix of prefixes) {
        for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) if (keys.length > 0) await client.unlink(keys);
      }
    } finally {
      await client.close();
    }
  });

  for (let run = 0; run < 12; run++) {
    const seed = SEED + run;
    it(`seed ${seed}`, async () => {
      const rnd = prng(seed);
      const int = (lo: number, hi: number): number => lo + Math.floor(rnd() * (hi - lo + 1));
      const retention: RetentionOptions = {};
      if (rnd() < 0.7) retention.maxEvents = int(1, 25);
      if (rnd() < 0.7) retention.maxBytes = int(4, 300);
      if (rnd() < 0.4) retention.maxAgeMs = int(1, 50);
      let now = T0;
      const clock = (): number => now;
      const keyPrefix = randomPrefix('model');
      prefixes.push(keyPrefix);
      const stores: Store[] = [memoryStore({ retention, now: clock }), await redisStore({ url: SHARED_REDIS_URL, keyPrefix, retention, now: clock })];
      const [model, redis] = stores as [Store, Store];
      try {
        const streams = ['a', 'b'];
        const state = new Map<string, { seq: number; chain: string }>();
        for (const s of streams) {
          const seedChain = chainSeed('e', s);
          state.set(s, { seq: 0, chain: seedChain });
          for (const store of stores) await store.log.openStream('S', s, seedChain, { kind: 'request', requestIds: [] });
        }
        for (let step = 0; step < 60; step++) {
          const stream = streams[int(0, streams.length - 1)] as string;
          const st = state.get(stream) as { seq: number; chain: string };
          now += rnd() < 0.3 ? int(0, 40) : 0;
          const batch: LogEvent[] = [];
          for (let i = int(1, 6); i > 0; i--) {
            let payload = '';
            for (let k = int(0, 12); k > 0; k--) payload += PIECES[int(0, PIECES.length - 1)];
            st.chain = nextChain(st.chain, payload);
            batch.push({ seq: ++st.seq, chain: st.chain, payload, at: now - int(0, 30) });
          }
          for (const store of stores) await store.log.append('S', stream, batch);
          const context = `seed ${seed}, step ${step}, stream ${stream}, retention ${JSON.stringify(retention)}`;
          assert.deepEqual(await redis.log.head('S', stream), await model.log.head('S', stream), `head: ${context}`);
          const plain = (events: LogEvent[]): unknown[] => events.map(({ seq, chain, payload, at }) => ({ seq, chain, payload, at }));
          assert.deepEqual(plain(await redis.log.read('S', stream, 0, 1_000)), plain(await model.log.read('S', stream, 0, 1_000)), `events: ${context}`);
        }
      } finally {
        for (const store of stores) await store.close();
      }
    });
  }
});
