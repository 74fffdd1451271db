import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { checkCursor, checkPosition } from '../../src/server/stream/resume.js';
import { chainSeed, formatEventId, nextChain, type EventId } from '../../src/protocol/event-id.js';
import { isContinuityError, type ContinuityError, type ErrorCode } from '../../src/protocol/errors.js';
import type { StreamHead } from '../../src/store/types.js';

const EPOCH = 'epochNow';
const PAST = ['epochOld1', 'epochOld2'];
const STREAM = 'st';

/** chains[n] is the chain of event n (chains[0] the seed) over 20 payloads. */
const chains: string[] = [chainSeed(EPOCH, STREAM)];
for (let n = 1; n <= 20; n++) chains.push(nextChain(chains[n - 1] as string, `{"n":${n}}`));

function chain(n: number): string {
  return chains[n] as string;
}

function cursor(seq: number, c = chain(seq)): EventId {
  return { epoch: EPOCH, stream: STREAM, seq, chain: c };
}

/** A head retaining events firstSeq..lastSeq of the chain above. */
function head(firstSeq: number, lastSeq: number): StreamHead {
  return {
    kind: 'request',
    requestIds: ['1'],
    firstSeq,
    baseChain: chain(firstSeq - 1),
    lastSeq,
    lastChain: chain(lastSeq),
    closed: false,
  };
}

/** chainAt over the retained window; records the seqs it was asked for. */
function store(h: StreamHead): { chainAt: (seq: number) => Promise<string | undefined>; asked: number[] } {
  const asked: number[] = [];
  return {
    asked,
    chainAt: async (seq) => {
      asked.push(seq);
      return seq >= h.firstSeq && seq <= h.lastSeq ? chain(seq) : undefined;
    },
  };
}

function isCode(code: ErrorCode, cause?: string): (err: unknown) => err is ContinuityError {
  return (err): err is ContinuityError => isContinuityError(err, code) && (cause === undefined || err.detail?.cause === cause);
}

describe('resume: checkCursor', () => {
  const raw = formatEventId(cursor(5));

  it('returns the parsed cursor for the current epoch', () => {
    assert.deepEqual(checkCursor(raw, EPOCH, PAST), cursor(5));
    assert.deepEqual(checkCursor(raw, EPOCH, []), cursor(5));
  });

  for (const bad of ['', 'garbage', `${EPOCH}.${STREAM}.00.${chain(1)}`, `${EPOCH}.${STREAM}.5.short`, `${raw}.x`, `${raw} `, 'a'.repeat(500)]) {
    it(`malformed ${JSON.stringify(bad.slice(0, 40))} → cursor-invalid (malformed)`, () => {
      assert.throws(
        () => checkCursor(bad, EPOCH, PAST),
        (err: unknown) => {
          assert.ok(isCode('cursor-invalid', 'malformed')(err), `expected cursor-invalid (malformed), got ${String(err)}`);
          assert.ok(isContinuityError(err.cause, 'event-id-invalid'), 'keeps the codec error as cause');
          assert.equal(err.status, 400);
          return true;
        },
      );
    });
  }

  it('foreign epoch → cursor-invalid (foreign)', () => {
    const foreign = formatEventId({ ...cursor(5), epoch: 'someoneElse' });
    assert.throws(() => checkCursor(foreign, EPOCH, PAST), isCode('cursor-invalid', 'foreign'));
    assert.throws(() => checkCursor(foreign, EPOCH, []), isCode('cursor-invalid', 'foreign'));
  });

  it('epoch comparison is exact (case-sensitive, no prefix match)', () => {
    for (const epoch of [EPOCH.toUpperCase(), EPOCH.slice(0, -1), `${EPOCH}x`, PAST[0]?.toUpperCase() as string]) {
      assert.throws(() => checkCursor(formatEventId({ ...cursor(5), epoch }), EPOCH, PAST), isCode('cursor-invalid', 'foreign'), epoch);
    }
  });

  it('past epoch → replay-epoch-mismatch (409) naming the current epoch', () => {
    for (const past of PAST) {
      assert.throws(
        () => checkCursor(formatEventId({ ...cursor(5), epoch: past }), EPOCH, PAST),
        (err: unknown) => {
          assert.ok(isContinuityError(err, 'replay-epoch-mismatch'), `expected replay-epoch-mismatch, got ${String(err)}`);
          assert.equal(err.status, 409);
          assert.equal(err.detail?.epoch, EPOCH);
          return true;
        },
      );
    }
  });

  it('the current epoch wins even if it also appears among past epochs', () => {
    assert.deepEqual(checkCursor(raw, EPOCH, [...PAST, EPOCH]), cursor(5));
  });
});

describe('resume: checkPosition', () => {
  it('unknown stream (head undefined) → cursor-invalid (unknown-stream)', async () => {
    await assert.rejects(
      checkPosition(cursor(1), undefined, async () => chain(1)),
      isCode('cursor-invalid', 'unknown-stream'),
    );
  });

  it('success inside the window returns cursor.seq and checks the stored chain of that event', async () => {
    const h = head(1, 10);
    for (let seq = 1; seq <= 10; seq++) {
      const s = store(h);
      assert.equal(await checkPosition(cursor(seq), h, s.chainAt), seq);
      assert.deepEqual(s.asked, [seq]);
    }
  });

  it('cursor at lastSeq (nothing to replay) succeeds', async () => {
    const h = head(3, 10);
    assert.equal(await checkPosition(cursor(10), h, store(h).chainAt), 10);
  });

  it('ahead of lastSeq → cursor-ahead (409)', async () => {
    const h = head(1, 10);
    for (const seq of [11, 12, 1000, Number.MAX_SAFE_INTEGER]) {
      const s = store(h);
      await assert.rejects(checkPosition(cursor(seq, chain(1)), h, s.chainAt), (err: unknown) => {
        assert.ok(isContinuityError(err, 'cursor-ahead'), `expected cursor-ahead, got ${String(err)}`);
        assert.equal(err.status, 409);
        assert.equal(err.detail?.lastSeq, 10);
        assert.equal(err.detail?.cursorSeq, seq);
        return true;
      });
      assert.deepEqual(s.asked, []);
    }
  });

  it('any cursor on an empty stream is ahead', async () => {
    const h = head(1, 0);
    await assert.rejects(checkPosition(cursor(1), h, store(h).chainAt), isCode('cursor-ahead'));
  });

  it('below the window → replay-window-exceeded (410)', async () => {
    const h = head(6, 10); // events 6..10 retained, base chain is event 5's
    for (const seq of [1, 2, 4]) {
      const s = store(h);
      await assert.rejects(checkPosition(cursor(seq), h, s.chainAt), (err: unknown) => {
        assert.ok(isContinuityError(err, 'replay-window-exceeded'), `expected replay-window-exceeded, got ${String(err)}`);
        assert.equal(err.status, 410);
        assert.equal(err.detail?.firstSeq, 6);
        return true;
      });
      assert.deepEqual(s.asked, []);
    }
  });

  it('the start cursor (seq 0, the seed): from the start while nothing is trimmed, else replay-window-exceeded', async () => {
    const whole = head(1, 10);
    assert.equal(await checkPosition(cursor(0), whole, store(whole).chainAt), 0);
    assert.equal(await checkPosition(cursor(0), head(1, 0), store(head(1, 0)).chainAt), 0, 'an empty stream too');
    await assert.rejects(checkPosition(cursor(0, chain(3)), whole, store(whole).chainAt), isCode('cursor-invalid', 'chain-mismatch'));
    const trimmed = head(2, 10);
    await assert.rejects(checkPosition(cursor(0), trimmed, store(trimmed).chainAt), isCode('replay-window-exceeded'));
  });

  it('at firstSeq - 1 compares baseChain without reading the log', async () => {
    const h = head(6, 10);
    const s = store(h);
    assert.equal(await checkPosition(cursor(5), h, s.chainAt), 5);
    assert.deepEqual(s.asked, []);
    await assert.rejects(checkPosition(cursor(5, chain(4)), h, s.chainAt), isCode('cursor-invalid', 'chain-mismatch'));
    assert.deepEqual(s.asked, []);
  });

  it('everything trimmed (firstSeq = lastSeq + 1): cursor at lastSeq matches baseChain', async () => {
    const h = head(11, 10);
    assert.equal(h.baseChain, h.lastChain);
    const s = store(h);
    assert.equal(await checkPosition(cursor(10), h, s.chainAt), 10);
    await assert.rejects(checkPosition(cursor(9), h, s.chainAt), isCode('replay-window-exceeded'));
    await assert.rejects(checkPosition(cursor(11, chain(10)), h, s.chainAt), isCode('cursor-ahead'));
    assert.deepEqual(s.asked, []);
  });

  it('chain mismatch inside the window → cursor-invalid (chain-mismatch)', async () => {
    const h = head(1, 10);
    const wrong = [chain(4), chain(6), chain(0), nextChain(chain(4), '{"n":5,"forged":true}'), 'AAAAAAAAAAAAAAAA'];
    for (const c of wrong) {
      await assert.rejects(checkPosition(cursor(5, c), h, store(h).chainAt), (err: unknown) => {
        assert.ok(isCode('cursor-invalid', 'chain-mismatch')(err), `expected cursor-invalid (chain-mismatch), got ${String(err)}`);
        assert.equal(err.status, 400);
        return true;
      });
    }
  });

  it('a cursor from another stream with the same seq does not match', async () => {
    const otherSeed = chainSeed(EPOCH, 'other');
    const other = nextChain(nextChain(otherSeed, '{"n":1}'), '{"n":2}');
    const h = head(1, 10);
    await assert.rejects(checkPosition(cursor(2, other), h, store(h).chainAt), isCode('cursor-invalid', 'chain-mismatch'));
  });

  it('chainAt returning undefined (trimmed meanwhile) → replay-window-exceeded', async () => {
    const h = head(1, 10);
    await assert.rejects(
      checkPosition(cursor(4), h, async () => undefined),
      (err: unknown) => {
        assert.ok(isContinuityError(err, 'replay-window-exceeded'), `expected replay-window-exceeded, got ${String(err)}`);
        assert.equal(err.detail?.cursorSeq, 4);
        return true;
      },
    );
  });

  it('a failing chainAt propagates its error', async () => {
    const h = head(1, 10);
    const boom = new Error('store down');
    await assert.rejects(
      checkPosition(cursor(4), h, async () => {
        throw boom;
      }),
      (err: unknown) => err === boom,
    );
  });
});
