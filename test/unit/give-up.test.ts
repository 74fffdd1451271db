/** A request's attempts, as a cancellation finds them: whether its cancellation goes, and whether "may have run" is reported. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GiveUps, RequestAttempts } from '../../src/client/give-up.js';
import type { ContinuityError } from '../../src/protocol/errors.js';

const mayHaveRun = (reports: ContinuityError[]): boolean[] => reports.map((r) => r.code === 'request-abandoned' && r.detail?.mayHaveRun === true);

describe('RequestAttempts', () => {
  it('given up between attempts that were all refused: no cancellation, nothing reported', () => {
    const a = new RequestAttempts(7, 1000);
    const reports: ContinuityError[] = [];
    a.begin();
    a.end(false);
    assert.equal(
      a.giveUp((e) => reports.push(e)),
      false,
    );
    assert.equal(a.givenUp, true);
    assert.equal(a.signal.aborted, true);
    assert.deepEqual(reports, []);
    assert.deepEqual(a.neverSent().detail, { requestId: 7 });
    assert.equal(a.neverSent().retryable, true);
  });

  it('given up with an attempt under way: the cancellation goes; reported once the attempt may have reached, not if it was refused', () => {
    for (const reached of [true, false]) {
      const a = new RequestAttempts('r', 1000);
      const reports: ContinuityError[] = [];
      a.begin();
      assert.equal(
        a.giveUp((e) => reports.push(e)),
        true,
      );
      assert.deepEqual(reports, [], 'not before the attempt ends');
      a.end(reached);
      assert.deepEqual(mayHaveRun(reports), reached ? [true] : []);
    }
  });

  it('given up after an attempt may have reached: the cancellation goes, reported at once', () => {
    const a = new RequestAttempts(1, 1000);
    const reports: ContinuityError[] = [];
    a.begin();
    a.end(true);
    assert.equal(
      a.giveUp((e) => reports.push(e)),
      true,
    );
    assert.deepEqual(mayHaveRun(reports), [true]);
    assert.equal(reports[0]?.detail?.requestId, 1);
  });
});

describe('GiveUps', () => {
  it('a cancellation of a request being sent gives it up first; others pass; a request is forgotten once sent', async () => {
    const reports: Error[] = [];
    const giveUps = new GiveUps(1000, (e) => reports.push(e));
    const ran: string[] = [];
    let seen: RequestAttempts | undefined;
    let finish!: () => void;
    const sending = giveUps.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: {} }, (a) => {
      seen = a;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const cancel = { jsonrpc: '2.0' as const, method: 'notifications/cancelled', params: { requestId: 3 } };
    await giveUps.send(cancel, async () => {
      ran.push('cancel while sending');
    });
    assert.equal(seen?.givenUp, true);
    assert.equal(ran.length, 0, 'never reached: the cancellation is not sent');
    finish();
    await sending;
    await giveUps.send(cancel, async () => {
      ran.push('cancel after');
    });
    await giveUps.send({ jsonrpc: '2.0', method: 'notifications/progress', params: {} }, async (a) => {
      ran.push(`notification ${String(a)}`);
    });
    assert.deepEqual(ran, ['cancel after', 'notification undefined']);
    assert.deepEqual(reports, []);
  });
});
