/** Property tests of the event-ID codec. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CHAIN_LENGTH, MAX_EVENT_ID_LENGTH, chainSeed, formatEventId, nextChain, parseEventId, tryParseEventId } from '../../src/protocol/event-id.js';
import { isContinuityError } from '../../src/protocol/errors.js';

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const token = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...B64), minLength: min, maxLength: max });
const eventId = fc.record({
  epoch: token(1, 43),
  stream: token(1, 32),
  seq: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  chain: token(CHAIN_LENGTH, CHAIN_LENGTH),
});

test('format then parse is the identity, and every formatted ID is short visible ASCII', () => {
  fc.assert(
    fc.property(eventId, (id) => {
      const raw = formatEventId(id);
      assert.deepEqual(parseEventId(raw), { ...id });
      assert.ok(raw.length <= MAX_EVENT_ID_LENGTH);
      assert.match(raw, /^[\x21-\x7e]+$/);
    }),
  );
});

test('parse never throws anything but a typed event-id-invalid, and what it accepts formats back to itself', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        eventId.map(formatEventId).chain((s) => fc.nat(s.length).map((i) => s.slice(0, i) + s.slice(i + 1))),
      ),
      (raw) => {
        let parsed;
        try {
          parsed = parseEventId(raw);
        } catch (error) {
          assert.ok(isContinuityError(error, 'event-id-invalid'), String(error));
          assert.equal(tryParseEventId(raw), undefined);
          return;
        }
        assert.equal(formatEventId(parsed), raw);
      },
    ),
    { numRuns: 2000 },
  );
});

test('the chain depends on every payload and on its order', () => {
  fc.assert(
    fc.property(token(1, 10), token(1, 10), fc.array(fc.string(), { minLength: 2, maxLength: 8 }), (epoch, stream, payloads) => {
      const chain = (ps: string[]): string => ps.reduce(nextChain, chainSeed(epoch, stream));
      const swapped = [...payloads];
      [swapped[0], swapped[1]] = [swapped[1] as string, swapped[0] as string];
      fc.pre(swapped[0] !== payloads[0]);
      assert.notEqual(chain(swapped), chain(payloads));
      assert.notEqual(chain([...payloads, 'x']), chain(payloads));
    }),
  );
});
