import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chainSeed, formatEventId, nextChain } from '../../src/protocol/event-id.js';
import {
  DEFAULT_MAX_STREAMS,
  boundStreams,
  isSessionCheckpoint,
  memoryCheckpoint,
  type CheckpointStore,
  type CheckpointStoreOptions,
  type SessionCheckpoint,
} from '../../src/client/checkpoint.js';
import { fileCheckpoint } from '../../src/client/file-checkpoint.js';
import { CheckpointError, isCheckpointError } from '../../src/client/errors.js';
import type { StreamCheckpoint } from '../../src/client/verifier.js';
import { MAX_UNFINISHED, MAX_UNFINISHED_PARAMS_BYTES } from '../../src/client/unfinished.js';

const EPOCH = 'q3Zt9xKc0bYw_1-A';
const SESSION = 'Jx0Qe3Jt1r8yGk4m_Zb2cA';

function chained(stream: string, seq: number, updatedAt?: number, complete?: boolean): StreamCheckpoint {
  let chain = chainSeed(EPOCH, stream);
  for (let i = 1; i <= seq; i++) chain = nextChain(chain, `payload ${i}`);
  const cp: StreamCheckpoint = { stream, lastId: formatEventId({ epoch: EPOCH, stream, seq, chain }), scheme: 'chained', seq, chain };
  if (updatedAt !== undefined) cp.updatedAt = updatedAt;
  if (complete !== undefined) cp.complete = complete;
  return cp;
}

/** A checkpoint with `n` chained streams named by base-36 counters, as the server names them. */
function checkpoint(n: number, updatedAt = 1_700_000_000_000): SessionCheckpoint {
  const streams: Record<string, StreamCheckpoint> = {};
  for (let i = 0; i < n; i++) {
    const name = i.toString(36);
    streams[name] = chained(name, 1 + (i % 7), updatedAt + i);
  }
  return { sessionId: SESSION, protocolVersion: '2025-11-25', epoch: EPOCH, streams, updatedAt };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-continuity-ckpt-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

let fileCounter = 0;
function freshPath(): string {
  return join(dir, `client-${++fileCounter}.ckpt`);
}

const stores: Array<[string, (options?: CheckpointStoreOptions) => CheckpointStore]> = [
  ['memory', (options) => memoryCheckpoint(options)],
  ['file', (options) => fileCheckpoint(freshPath(), options)],
];

for (const [kind, make] of stores) {
  describe(`checkpoint (${kind}): contract`, () => {
    it('loads undefined before the first save', async () => {
      assert.equal(await make().load(), undefined);
    });

    it('round-trips a checkpoint of every scheme', async () => {
      const store = make();
      const cp = checkpoint(3);
      cp.streams.get = { stream: 'get', lastId: '1041', scheme: 'integer', seq: 1041, digest: 'AbCdEfGh-_012345', updatedAt: 5 };
      cp.streams.op = { stream: 'op', lastId: 'op_1700000000000_x', scheme: 'opaque', complete: true };
      // A stream named "__proto__" (as JSON.parse would produce it): must stay an own data property.
      Object.defineProperty(cp.streams, '__proto__', {
        value: { stream: '__proto__', lastId: 'p', scheme: 'opaque' },
        enumerable: true,
        writable: true,
        configurable: true,
      });
      await store.save(cp);
      const loaded = await store.load();
      assert.deepEqual(loaded, cp);
      assert.ok(isSessionCheckpoint(loaded));
      assert.equal(Object.getPrototypeOf(loaded?.streams), Object.prototype, 'a stream named __proto__ stays data');
      assert.equal(Object.keys(loaded?.streams ?? {}).length, 6);
    });

    it('round-trips a null epoch', async () => {
      const store = make();
      const cp = { ...checkpoint(1), epoch: null };
      await store.save(cp);
      assert.deepEqual(await store.load(), cp);
    });

    it('stores a copy: mutating the saved or loaded object changes nothing', async () => {
      const store = make();
      const cp = checkpoint(2);
      await store.save(cp);
      cp.sessionId = 'changed';
      const loaded = await store.load();
      assert.ok(loaded);
      assert.equal(loaded.sessionId, SESSION);
      loaded.streams = {};
      assert.equal(Object.keys((await store.load())?.streams ?? {}).length, 2);
    });

    it('a later save replaces an earlier one; the last call wins even without awaiting', async () => {
      const store = make();
      const saves = [1, 2, 3, 4, 5].map((n) => store.save(checkpoint(n, n)));
      await Promise.all(saves);
      assert.equal((await store.load())?.updatedAt, 5);
    });

    it('clear forgets it, and clearing twice is fine', async () => {
      const store = make();
      await store.save(checkpoint(1));
      await store.clear();
      assert.equal(await store.load(), undefined);
      await store.clear();
      assert.equal(await store.load(), undefined);
    });

    it('refuses to save a malformed checkpoint (TypeError), keeping the old one', async () => {
      const store = make();
      await store.save(checkpoint(1));
      const bad: unknown[] = [
        { ...checkpoint(1), sessionId: '' },
        { ...checkpoint(1), sessionId: 'has space' },
        { ...checkpoint(1), epoch: 7 },
        { ...checkpoint(1), updatedAt: Number.POSITIVE_INFINITY },
        { ...checkpoint(1), streams: [] },
        { ...checkpoint(1), streams: { x: chained('y', 1) } },
        { ...checkpoint(1), streams: { x: { stream: 'x', lastId: 'nope', scheme: 'chained' } } },
      ];
      for (const value of bad) await assert.rejects(store.save(value as SessionCheckpoint), TypeError);
      assert.deepEqual(await store.load(), checkpoint(1));
    });

    it(`bounds streams to ${DEFAULT_MAX_STREAMS} by default: the oldest go`, async () => {
      const store = make();
      await store.save(checkpoint(100));
      const loaded = await store.load();
      assert.ok(loaded);
      const names = Object.keys(loaded.streams);
      assert.equal(names.length, DEFAULT_MAX_STREAMS);
      // updatedAt grows with the index: streams 36..99 (base 36) are the newest.
      const expected = Array.from({ length: DEFAULT_MAX_STREAMS }, (_, i) => (i + 100 - DEFAULT_MAX_STREAMS).toString(36));
      assert.deepEqual(new Set(names), new Set(expected));
    });

    it('bounds streams to maxStreams: complete streams go first, then the oldest', async () => {
      const store = make({ maxStreams: 3 });
      const cp: SessionCheckpoint = {
        ...checkpoint(0),
        streams: {
          a: chained('a', 1, 10),
          b: chained('b', 2, 50, true),
          c: chained('c', 3, 5),
          d: chained('d', 4, 40),
          e: chained('e', 5),
          f: chained('f', 6, 30),
        },
      };
      await store.save(cp);
      assert.deepEqual(Object.keys((await store.load())?.streams ?? {}).sort(), ['a', 'd', 'f']);
    });

    it('rejects a maxStreams that is not a non-negative integer', () => {
      assert.throws(() => make({ maxStreams: -1 }), TypeError);
      assert.throws(() => make({ maxStreams: 1.5 }), TypeError);
    });
  });
}

describe('checkpoint: boundStreams (pure)', () => {
  it('returns a copy within the bound, and never changes its input', () => {
    const cp = checkpoint(5);
    const same = boundStreams(cp, 5);
    assert.deepEqual(same, cp);
    assert.notEqual(same.streams, cp.streams);
    const bounded = boundStreams(cp, 2);
    assert.deepEqual(Object.keys(bounded.streams), ['3', '4']);
    assert.equal(Object.keys(cp.streams).length, 5);
  });

  it('drops streams without updatedAt before dated ones, keeping order on ties', () => {
    const cp: SessionCheckpoint = { ...checkpoint(0), streams: { x: chained('x', 1), y: chained('y', 1), z: chained('z', 1, 1) } };
    assert.deepEqual(Object.keys(boundStreams(cp, 2).streams), ['y', 'z']);
    assert.deepEqual(Object.keys(boundStreams(cp, 0).streams), []);
  });
});

describe('checkpoint (file): atomicity and durability', () => {
  it('no partial file is ever visible: a concurrent reader always loads a whole checkpoint', async () => {
    const path = freshPath();
    const writer = fileCheckpoint(path);
    const reader = fileCheckpoint(path);
    // Sizes vary a lot between saves (1..60 streams) so a torn write would show.
    const total = 200;
    let done = false;
    const writes = (async () => {
      for (let i = 1; i <= total; i++) {
        const pending = writer.save(checkpoint(1 + ((i * 37) % 60), i));
        if (i % 3 === 0) await pending; // mix queued and awaited saves
      }
      await writer.save(checkpoint(5, total + 1));
      done = true;
    })();
    let loads = 0;
    let last = 0;
    const reads = (async () => {
      while (!done) {
        const cp = await reader.load(); // throws checkpoint-corrupt on a torn file
        loads++;
        if (cp === undefined) {
          assert.equal(last, 0, 'the file never disappears once written');
          continue;
        }
        assert.ok(isSessionCheckpoint(cp));
        assert.ok(cp.updatedAt >= last, 'saves become visible in order');
        last = cp.updatedAt;
      }
    })();
    await Promise.all([writes, reads]);
    assert.ok(loads > 10, `the reader ran concurrently (${loads} loads)`);
    assert.equal((await reader.load())?.updatedAt, total + 1);
    // No temporary files are left behind.
    const leftovers = (await readdir(dir)).filter((f) => f.endsWith('.tmp'));
    assert.deepEqual(leftovers, []);
  });

  it('creates the file with mode 0600 (it holds a session ID)', { skip: process.platform === 'win32' }, async () => {
    const path = freshPath();
    await fileCheckpoint(path).save(checkpoint(1));
    assert.equal((await stat(path)).mode & 0o777, 0o600);
  });

  it('a failed save rejects and leaves no temporary file behind', async () => {
    await assert.rejects(
      fileCheckpoint(join(dir, 'no-such-dir', 'x.ckpt')).save(checkpoint(1)),
      (err: unknown) => (err as { code?: string }).code === 'ENOENT',
    );
    // A non-empty directory where the file should go: the temp file is written, the rename fails.
    const blocked = join(dir, 'blocked');
    await mkdir(join(blocked, 'inside'), { recursive: true });
    await assert.rejects(fileCheckpoint(blocked).save(checkpoint(1)));
    assert.deepEqual(
      (await readdir(dir)).filter((f) => f.endsWith('.tmp')),
      [],
    );
    await rm(blocked, { recursive: true });
  });

  it('survives a new store instance (a client restart)', async () => {
    const path = freshPath();
    await fileCheckpoint(path).save(checkpoint(4));
    assert.deepEqual(await fileCheckpoint(path).load(), checkpoint(4));
  });
});

describe('checkpoint (file): corrupt files are reported, never mistaken for "no session"', () => {
  const valid = JSON.stringify({ format: 'mcp-continuity/checkpoint', version: 1, checkpoint: checkpoint(2) });
  const cases: Array<[string, string]> = [
    ['empty file', ''],
    ['garbage', '\u0000\u0001not json'],
    ['truncated JSON', valid.slice(0, valid.length / 2)],
    ['JSON null', 'null'],
    ['a bare checkpoint without the envelope', JSON.stringify(checkpoint(2))],
    ['another format', JSON.stringify({ format: 'other', version: 1, checkpoint: checkpoint(2) })],
    ['a future version', JSON.stringify({ format: 'mcp-continuity/checkpoint', version: 2, checkpoint: checkpoint(2) })],
    ['missing sessionId', JSON.stringify({ format: 'mcp-continuity/checkpoint', version: 1, checkpoint: { ...checkpoint(2), sessionId: undefined } })],
    [
      'a stream with an unknown scheme',
      JSON.stringify({
        format: 'mcp-continuity/checkpoint',
        version: 1,
        checkpoint: { ...checkpoint(0), streams: { a: { stream: 'a', lastId: '1', scheme: 'weird' } } },
      }),
    ],
    [
      'a chained stream whose chain contradicts its ID',
      JSON.stringify({
        format: 'mcp-continuity/checkpoint',
        version: 1,
        checkpoint: { ...checkpoint(0), streams: { a: { ...chained('a', 2), chain: chained('a', 3).chain } } },
      }),
    ],
  ];
  for (const [name, text] of cases) {
    it(name, async () => {
      const path = freshPath();
      await writeFile(path, text);
      const store = fileCheckpoint(path);
      await assert.rejects(store.load(), (err: unknown) => {
        assert.ok(err instanceof CheckpointError);
        assert.ok(isCheckpointError(err, 'checkpoint-corrupt'));
        assert.equal(err.detail?.path, path);
        return true;
      });
      // Recovery: clear, then the store is usable again.
      await store.clear();
      assert.equal(await store.load(), undefined);
      await store.save(checkpoint(1));
      assert.deepEqual(await store.load(), checkpoint(1));
    });
  }

  it('a file over maxBytes is refused without being parsed', async () => {
    const path = freshPath();
    await fileCheckpoint(path).save(checkpoint(10));
    await assert.rejects(fileCheckpoint(path, { maxBytes: 100 }).load(), (err: unknown) => isCheckpointError(err, 'checkpoint-corrupt'));
    assert.ok(await fileCheckpoint(path).load());
  });

  it('other I/O errors are not disguised as corruption', async () => {
    // A directory at the checkpoint's path: reading it fails with EISDIR, not checkpoint-corrupt.
    await assert.rejects(fileCheckpoint(dir).load(), (err: unknown) => !isCheckpointError(err) && (err as { code?: string }).code === 'EISDIR');
  });

  it('matches by brand across module copies', () => {
    class Foreign extends Error {}
    Object.defineProperty(Foreign.prototype, Symbol.for('mcp-continuity.checkpoint'), { value: true });
    assert.ok(new Foreign() instanceof CheckpointError);
    assert.equal(new Error('x') instanceof CheckpointError, false);
  });
});

describe('checkpoint (file): a key authenticates it', () => {
  const KEY = new TextEncoder().encode('0123456789abcdef');

  it('round-trips under its key; the MAC covers exactly what was saved', async () => {
    const path = freshPath();
    await fileCheckpoint(path, { key: KEY }).save(checkpoint(3));
    assert.deepEqual(await fileCheckpoint(path, { key: KEY }).load(), checkpoint(3));
    // Without a key the MAC is not checked: the file is as trusted as its file system.
    assert.deepEqual(await fileCheckpoint(path).load(), checkpoint(3));
  });

  it('refuses an edited file, one without a MAC, and one under another key (part mac)', async () => {
    const edited = freshPath();
    await fileCheckpoint(edited, { key: KEY }).save(checkpoint(3));
    await writeFile(edited, (await readFile(edited, 'utf8')).replace('"epoch":"', '"epoch":"x'));
    const unkeyed = freshPath();
    await fileCheckpoint(unkeyed).save(checkpoint(3));
    const otherKey = freshPath();
    await fileCheckpoint(otherKey, { key: 'another key of 16+ bytes' }).save(checkpoint(3));
    for (const path of [edited, unkeyed, otherKey]) {
      await assert.rejects(
        fileCheckpoint(path, { key: KEY }).load(),
        (err: unknown) => isCheckpointError(err, 'checkpoint-corrupt') && err.detail?.part === 'mac',
      );
    }
  });

  it('a key shorter than 16 bytes, or not a string or bytes, is a TypeError naming it', () => {
    for (const key of ['short', new Uint8Array(15), 42 as unknown as string]) {
      assert.throws(
        () => fileCheckpoint(freshPath(), { key }),
        (err: unknown) => err instanceof TypeError && /key/.test(err.message),
      );
    }
  });
});

describe('checkpoint (file): the count of values before parsing never refuses a valid checkpoint', () => {
  it('the largest valid one loads: 64 streams, 64 unfinished calls with params nested to their bound, brackets inside strings', async () => {
    const depth = (MAX_UNFINISHED_PARAMS_BYTES - '{"a":}'.length) / 2;
    const nested: unknown = JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    const inFlight = Array.from({ length: MAX_UNFINISHED }, (_, i) => ({ id: i, method: 'tools/call', sentAt: 1, params: { a: nested } }));
    const big: SessionCheckpoint = {
      ...checkpoint(DEFAULT_MAX_STREAMS),
      inFlight,
      // Brackets inside strings are text, not values.
      initializeResult: JSON.stringify({ instructions: '[{"\\'.repeat(8000) }),
    };
    const path = freshPath();
    await fileCheckpoint(path).save(big);
    // Compared as JSON: assert's deep comparison recurses deeper than the stack allows here.
    assert.equal(JSON.stringify(await fileCheckpoint(path).load()), JSON.stringify(big));
  });
});
