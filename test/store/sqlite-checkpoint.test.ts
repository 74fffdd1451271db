/**
 * WAL checkpoints run on a worker thread: the database file takes the WAL's pages while the
 * store keeps appending, long before the store connection's own backstop would checkpoint;
 * appends held off while the worker starts the WAL over all land.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chainSeed, nextChain } from '../../src/protocol/event-id.js';
import { BACKSTOP_PAGES, CHECKPOINT_BYTES, RESTART_PAGES } from '../../src/store/sqlite/checkpoint.js';
import { sqliteStore } from '../../src/store/sqlite/index.js';
import type { LogEvent, Store } from '../../src/store/types.js';
import { waitFor } from '../helpers/wait.js';

const DIR = mkdtempSync(join(tmpdir(), 'mcpc-sqlite-checkpoint-'));
after(() => rmSync(DIR, { recursive: true, force: true }));

const PAGE = 4096;

/** Appends `bytes` of 64 KiB payloads to `S/st`, four to a batch; returns the head's seq and chain. */
async function fill(store: Store, bytes: number): Promise<{ seq: number; chain: string; payload: string }> {
  const seed = chainSeed('epoch', 'st');
  await store.log.openStream('S', 'st', seed, { kind: 'request', requestIds: ['1'] });
  const payload = JSON.stringify({ pad: 'x'.repeat(64 * 1024) });
  let chain = seed;
  let seq = 0;
  for (let written = 0; written < bytes; written += payload.length * 4) {
    const events: LogEvent[] = [];
    for (let i = 0; i < 4; i++) {
      chain = nextChain(chain, payload);
      events.push({ seq: ++seq, chain, payload, at: 1 });
    }
    await store.log.append('S', 'st', events);
  }
  return { seq, chain, payload };
}

describe('sqlite store: checkpoints', () => {
  it('the worker checkpoints the WAL into the database file; close waits for it and the file reopens intact', async () => {
    const path = join(DIR, 'ckpt.db');
    const store = sqliteStore({ path, retention: { maxBytes: 1 << 30 } });
    // Past the point where the worker starts the WAL over, below the backstop.
    const bytes = 1.5 * RESTART_PAGES * PAGE;
    assert.ok(bytes > 2 * CHECKPOINT_BYTES && bytes < BACKSTOP_PAGES * PAGE);
    const { seq, chain, payload } = await fill(store, bytes);
    await waitFor(
      () => statSync(path).size >= CHECKPOINT_BYTES,
      () => `the database file to take the WAL's pages (${statSync(path).size} bytes)`,
    );
    await store.close();

    const reopened = sqliteStore({ path });
    try {
      const head = await reopened.log.head('S', 'st');
      assert.equal(head?.lastSeq, seq);
      assert.equal(head?.lastChain, chain);
      assert.equal((await reopened.log.read('S', 'st', seq - 1, 1))[0]?.payload, payload);
    } finally {
      await reopened.close();
    }
  });
});
