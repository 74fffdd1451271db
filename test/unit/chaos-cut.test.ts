/** The chaos proxies' cut counters, fed chunk by chunk as the sockets would. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byteCut, eventCut, NO_CUT } from '../../src/chaos/cut.js';

const feedAll = (counter: ReturnType<typeof byteCut>, chunks: string[]): { forwarded: string; cut: boolean } => {
  let forwarded = '';
  for (const c of chunks) {
    const chunk = Buffer.from(c, 'latin1');
    const end = counter.feed(chunk);
    if (end === undefined) {
      forwarded += c;
      continue;
    }
    return { forwarded: forwarded + chunk.subarray(0, end).toString('latin1'), cut: true };
  }
  return { forwarded, cut: false };
};

test('byteCut: cuts after N bytes, wherever the chunks break', () => {
  const text = 'abcdefghijklmnopqrstuvwxyz';
  for (let size = 1; size <= text.length; size++) {
    const chunks = text.match(new RegExp(`.{1,${size}}`, 'g')) as string[];
    assert.deepEqual(feedAll(byteCut(10), chunks), { forwarded: 'abcdefghij', cut: true }, `chunks of ${size}`);
  }
  assert.deepEqual(feedAll(byteCut(undefined), ['abc']), { forwarded: 'abc', cut: false });
});

test('byteCut: counts from a marker, also one split across chunks', () => {
  const text = 'head:head:MARKdata-data-data';
  for (let size = 1; size <= text.length; size++) {
    const chunks = text.match(new RegExp(`.{1,${size}}`, 'g')) as string[];
    assert.deepEqual(feedAll(byteCut(6, 'MARK'), chunks), { forwarded: 'head:head:MARKda', cut: true }, `chunks of ${size}`);
  }
  assert.deepEqual(feedAll(byteCut(3, 'NOPE'), ['abc', 'def']), { forwarded: 'abcdef', cut: false }, 'no marker, no cut');
});

test('eventCut: cuts right after the Nth event, terminators split across chunks included', () => {
  const text = 'data: 1\n\ndata: 2\n\ndata: 3\n\n';
  for (let size = 1; size <= text.length; size++) {
    const chunks = text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) as string[];
    const counter = eventCut(2, undefined);
    assert.deepEqual(feedAll(counter, chunks), { forwarded: 'data: 1\n\ndata: 2\n\n', cut: true }, `chunks of ${size}`);
    assert.equal(counter.events, 2);
    assert.equal(counter.bytes, 18);
  }
});

test('eventCut: the byte bound wins when it comes first; no bounds never cut', () => {
  const counter = eventCut(5, 12);
  assert.deepEqual(feedAll(counter, ['data: 1\n\ndata: 2\n\n']), { forwarded: 'data: 1\n\ndat', cut: true });
  assert.equal(counter.events, 1);
  assert.equal(eventCut(undefined, undefined), NO_CUT);
});
