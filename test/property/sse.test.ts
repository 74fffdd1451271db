/** The SSE encoder, round-tripped through eventsource-parser with arbitrary chunking. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { encodeSseEvent } from '../../src/protocol/sse.js';
import { isContinuityError } from '../../src/protocol/errors.js';

/** Feeds `text` to a fresh parser split at `cuts` (UTF-8 bytes, decoded as a stream would be). */
function parse(text: string, cuts: number[]): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e) });
  const bytes = new TextEncoder().encode(text);
  const decoder = new TextDecoder();
  let from = 0;
  for (const at of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    parser.feed(decoder.decode(bytes.subarray(from, at), { stream: true }));
    from = at;
  }
  parser.feed(decoder.decode(bytes.subarray(from)));
  return out;
}

const data = fc.string({
  unit: fc.oneof(fc.constantFrom('\n', '\r', '\r\n', ':', ' ', 'data: ', 'id: '), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  maxLength: 60,
});
const id = fc.string({ unit: 'binary', maxLength: 40 }).filter((s) => !/[\r\n\0]/.test(s));

test('what the encoder writes, the parser reads back: same id, same data (line breaks as LF)', () => {
  fc.assert(
    fc.property(fc.array(fc.record({ id, data }), { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 6 }), (events, cuts) => {
      const parsed = parse(events.map((e) => encodeSseEvent(e)).join(''), cuts);
      assert.equal(parsed.length, events.length);
      events.forEach((e, i) => {
        assert.equal(parsed[i]?.data, e.data.replace(/\r\n|\r/g, '\n'));
        assert.equal(parsed[i]?.id ?? '', e.id);
      });
    }),
    { numRuns: 1000 },
  );
});

test('an id with CR, LF or NUL is refused, never written (no field injection)', () => {
  fc.assert(
    fc.property(fc.string(), fc.constantFrom('\r', '\n', '\0'), fc.string(), (a, bad, b) => {
      assert.throws(
        () => encodeSseEvent({ id: a + bad + b, data: 'x' }),
        (e: unknown) => isContinuityError(e, 'sse-field-invalid'),
      );
    }),
  );
});
