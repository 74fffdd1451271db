/**
 * The client's verifier against arbitrary histories: a true continuation — however it is
 * cut, resumed and boundary-replayed — is accepted event for event, exactly once; and a
 * resume that skips, rewinds or rewrites anything is never called continuous.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { chainSeed, formatEventId, nextChain } from '../../src/protocol/event-id.js';
import { createStreamVerifier, isDivergence } from '../../src/client/verifier.js';

const EPOCH = 'epochAAAA';
const STREAM = 's1';

/** The stream's events: ids with their real chain. */
function history(payloads: readonly string[]): Array<{ id: string; data: string }> {
  let chain = chainSeed(EPOCH, STREAM);
  return payloads.map((data, i) => {
    chain = nextChain(chain, data);
    return { id: formatEventId({ epoch: EPOCH, stream: STREAM, seq: i + 1, chain }), data };
  });
}

const payloads = fc.array(fc.string({ maxLength: 12 }), { minLength: 2, maxLength: 40 });

test('a true history, cut anywhere and resumed with a boundary replay, is delivered exactly once in order', () => {
  fc.assert(
    fc.property(payloads, fc.array(fc.nat(), { maxLength: 6 }), (ps, cutsRaw) => {
      const events = history(ps);
      const cuts = new Set(cutsRaw.map((c) => 1 + (c % (events.length - 1))));
      const v = createStreamVerifier({ epoch: EPOCH, stream: STREAM });
      const delivered: number[] = [];
      events.forEach((e, i) => {
        if (cuts.has(i)) {
          // A reconnect: the server replays the event the cursor names first (boundary replay).
          v.reconnected();
          const boundary = events[i - 1] as { id: string; data: string };
          assert.equal(v.check(boundary.id, boundary.data).kind, 'boundary-replay');
        }
        const verdict = v.check(e.id, e.data);
        assert.equal(verdict.kind, 'continuous', `event ${i + 1}`);
        delivered.push(i + 1);
      });
      assert.deepEqual(
        delivered,
        events.map((_, i) => i + 1),
      );
    }),
    { numRuns: 500 },
  );
});

test('after a resume, a skipped, rewound or rewritten event is never continuous', () => {
  fc.assert(
    fc.property(
      payloads,
      fc.nat(),
      fc.constantFrom('skip', 'rewind', 'rewrite', 'other-epoch'),
      fc.string({ minLength: 1, maxLength: 5 }),
      (ps, at, fault, junk) => {
        const events = history(ps);
        const k = 1 + (at % (events.length - 1)); // events 1..k were seen
        const v = createStreamVerifier({ epoch: EPOCH, stream: STREAM });
        for (const e of events.slice(0, k)) assert.equal(v.check(e.id, e.data).kind, 'continuous');
        v.reconnected();
        let probe: { id: string; data: string };
        switch (fault) {
          case 'skip':
            fc.pre(k + 1 < events.length);
            probe = events[k + 1] as { id: string; data: string };
            break;
          case 'rewind':
            fc.pre(k >= 2);
            probe = events[k - 2] as { id: string; data: string };
            break;
          case 'rewrite': {
            fc.pre(k < events.length);
            // The next seq, but another payload: its chain cannot continue the history.
            const real = events[k] as { id: string; data: string };
            fc.pre(real.data !== real.data + junk);
            probe = { id: real.id, data: real.data + junk };
            break;
          }
          case 'other-epoch': {
            fc.pre(k < events.length);
            const real = history(ps.map((p) => p))[k] as { id: string; data: string };
            probe = { id: real.id.replace(EPOCH, 'epochBBBB'), data: real.data };
            break;
          }
        }
        const verdict = v.check(probe.id, probe.data);
        // Not continuous, not silently dropped: a divergence the transport acts on.
        assert.ok(isDivergence(verdict), `${fault} at ${k}: ${verdict.kind}`);
      },
    ),
    { numRuns: 1000 },
  );
});
