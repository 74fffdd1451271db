/**
 * A checkpoint that cannot be used fails `connect`: a truncated, oversized or
 * invalid file makes the SDK `Client`'s connect reject with a typed `CheckpointError`,
 * carrying the calls in flight that could still be read, and the file stays byte for byte
 * as it was until the application clears it. Reading is bounded whatever `maxBytes` says.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, fileCheckpoint, isCheckpointError, type SessionCheckpoint } from '../../src/client/index.js';
import { MAX_CHECKPOINT_BYTES } from '../../src/client/file-checkpoint.js';
import { MAX_SALVAGED } from '../../src/client/unfinished.js';
import { startFixture, type Fixture } from '../helpers/fixture.js';
import { tempFiles } from '../helpers/temp-files.js';
import { waitFor } from '../helpers/wait.js';

const files = tempFiles('mcp-ckpt-broken-');
let f: Fixture;
/** The file a real client wrote for a real session, as text. */
let valid: string;

before(async () => {
  f = await startFixture({ keepAliveMs: 0 });
  const path = files.path('ckpt');
  const store = fileCheckpoint(path);
  const client = new Client({ name: 'first', version: '1.0.0' });
  const transport = new ContinuityClientTransport(f.url, { checkpoint: store, checkpointIntervalMs: 1 });
  await client.connect(transport);
  await waitFor(async () => (await store.load())?.initializeResult !== undefined, 'the checkpoint to hold the initialize result');
  await client.close();
  valid = await readFile(path, 'utf8');
});
after(() => f.close());

/** `text` written to a fresh path: its path. */
async function written(text: string): Promise<string> {
  const path = files.path('ckpt');
  await writeFile(path, text);
  return path;
}

/** The envelope of the valid file with its checkpoint changed by `edit`. */
function edited(edit: (checkpoint: SessionCheckpoint) => unknown): string {
  const envelope = JSON.parse(valid) as { checkpoint: SessionCheckpoint };
  return JSON.stringify({ ...envelope, checkpoint: edit(envelope.checkpoint) });
}

const unfinished = (n: number): unknown[] =>
  Array.from({ length: n }, (_, i) => ({ id: i + 1, method: 'tools/call', sentAt: 1_700_000_000_000 + i, params: { name: 'pay', arguments: { order: i } } }));

/** Connects a new SDK Client from the file at `path`; resolves with the rejection, asserting the file did not change. */
async function refusedConnect(path: string, options: Parameters<typeof fileCheckpoint>[1] = {}): Promise<unknown> {
  const before = await readFile(path);
  const errors: Error[] = [];
  const transport = new ContinuityClientTransport(f.url, { checkpoint: fileCheckpoint(path, options) });
  transport.onerror = (e) => errors.push(e);
  const client = new Client({ name: 'second', version: '1.0.0' });
  const sessions = f.endpoint.sessionCount;
  let refusal: unknown;
  await assert.rejects(
    client.connect(transport).then(() => client.close()),
    (err: unknown) => {
      refusal = err;
      return true;
    },
  );
  await transport.close();
  assert.deepEqual(await readFile(path), before, 'the file is left byte for byte as it was, even once the transport closed');
  assert.equal(f.endpoint.sessionCount, sessions, 'no new session was started');
  return refusal;
}

describe('a bad checkpoint fails connect, and the file stays', () => {
  it('truncated: checkpoint-corrupt (json)', async () => {
    const err = await refusedConnect(await written(valid.slice(0, Math.floor(valid.length / 2))));
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.detail?.part, 'json');
    assert.deepEqual(err.unfinished, []);
  });

  it('oversized (1 MiB and more): checkpoint-corrupt (too-large), never read', async () => {
    const text = edited((c) => ({ ...c, padding: 'x'.repeat(1024 * 1024) }));
    const err = await refusedConnect(await written(text));
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.detail?.part, 'too-large');
  });

  it('invalid (65 unfinished entries): checkpoint-corrupt, carrying the 65 calls it lists', async () => {
    const err = await refusedConnect(await written(edited((c) => ({ ...c, inFlight: unfinished(65) }))));
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.detail?.part, 'inFlight');
    assert.equal(err.unfinished.length, 65);
    assert.deepEqual(err.unfinished[64], unfinished(65)[64]);
  });

  it('an unreadable stored initialize result: checkpoint-corrupt, carrying the calls in flight', async () => {
    const err = await refusedConnect(await written(edited((c) => ({ ...c, initializeResult: '{"not":"a result"}', inFlight: unfinished(2) }))));
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.detail?.part, 'initializeResult');
    assert.deepEqual(err.unfinished, unfinished(2));
  });

  it("a store of the application's own that loads a malformed checkpoint: checkpoint-corrupt, carrying its calls", async () => {
    const stored = { ...(JSON.parse(valid) as { checkpoint: SessionCheckpoint }).checkpoint, inFlight: unfinished(65) } as SessionCheckpoint;
    let cleared = false;
    const store = {
      load: () => Promise.resolve(structuredClone(stored)),
      save: () => Promise.resolve(),
      clear: () => Promise.resolve(void (cleared = true)),
    };
    const transport = new ContinuityClientTransport(f.url, { checkpoint: store });
    await assert.rejects(new Client({ name: 'second', version: '1.0.0' }).connect(transport), (err: unknown) => {
      assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
      assert.equal(err.detail?.part, 'inFlight');
      assert.equal(err.unfinished.length, 65);
      return true;
    });
    await transport.close();
    assert.equal(cleared, false, 'the store is not cleared');
  });

  it('the application clears it, and the next connect starts afresh', async () => {
    const path = await written(valid.slice(0, 10));
    await refusedConnect(path);
    await fileCheckpoint(path).clear();
    const client = new Client({ name: 'third', version: '1.0.0' });
    await client.connect(new ContinuityClientTransport(f.url, { checkpoint: fileCheckpoint(path) }));
    assert.equal(client.getServerVersion()?.name, 'mcp-continuity-example');
    await client.close();
  });
});

describe('reading is bounded whatever maxBytes says', () => {
  it(`maxBytes above ${MAX_CHECKPOINT_BYTES} (or not a positive integer) is a TypeError naming it`, () => {
    for (const maxBytes of [256 * 1024 * 1024, MAX_CHECKPOINT_BYTES + 1, 0, -1, 1.5, Number.NaN]) {
      assert.throws(
        () => fileCheckpoint(files.path('ckpt'), { maxBytes }),
        (err: unknown) => err instanceof TypeError && /maxBytes/.test(err.message),
      );
    }
  });

  it('a checkpoint of 10⁶ unfinished entries is refused by its size, without being read', async () => {
    const path = await written(edited((c) => ({ ...c, inFlight: unfinished(1_000_000) })));
    const err = await refusedConnect(path, { maxBytes: MAX_CHECKPOINT_BYTES });
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.detail?.part, 'too-large');
  });

  it('a file at the ceiling full of tiny values is refused before it is parsed, with a small memory peak', async () => {
    // 4 MiB of empty arrays parse into over a million objects (over 100 MB); counted first, none is built.
    const filler = '[],'.repeat(Math.floor((MAX_CHECKPOINT_BYTES - valid.length) / 3) - 10);
    const path = await written(edited((c) => ({ ...c, inFlight: JSON.parse(`[${filler}[]]`) as unknown })));
    const rss = process.memoryUsage().rss;
    const err = await refusedConnect(path, { maxBytes: MAX_CHECKPOINT_BYTES });
    const grown = process.memoryUsage().rss - rss;
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.detail?.part, 'too-many-values');
    assert.ok(grown < 64 * 1024 * 1024, `rss grew by ${grown} bytes`);
  });

  it(`a refused checkpoint carries at most ${MAX_SALVAGED} unfinished calls`, async () => {
    const err = await refusedConnect(await written(edited((c) => ({ ...c, inFlight: unfinished(MAX_SALVAGED + 100) }))));
    assert.ok(isCheckpointError(err, 'checkpoint-corrupt'), String(err));
    assert.equal(err.unfinished.length, MAX_SALVAGED);
  });
});
