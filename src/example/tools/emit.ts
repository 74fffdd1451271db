import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { ToolInputError, defineTool, type ExampleTool } from './table.js';

/** Upper bound on `count`, so one call cannot run unbounded. */
export const EMIT_MAX_COUNT = 100_000;

/** Upper bound on `bytes` (1 MiB): the padding of a single notification. */
export const EMIT_MAX_BYTES = 1024 * 1024;

/**
 * Upper bound on `count × bytes` (256 MiB of padding): each bound alone still let one call
 * produce 100 GiB, hours of serialization, logging and (on SQLite) disk writes.
 */
export const EMIT_MAX_TOTAL_BYTES = 256 * 1024 * 1024;

/** Upper bound on `intervalMs` (one minute between steps). */
export const EMIT_MAX_INTERVAL_MS = 60_000;

const emitInput = z.object({
  count: z
    .number()
    .int()
    .min(0)
    .max(EMIT_MAX_COUNT)
    .default(10)
    .describe('How many steps to emit (each step is one log message, plus one progress notification when a progress token is given).'),
  intervalMs: z
    .number()
    .int()
    .min(0)
    .max(EMIT_MAX_INTERVAL_MS)
    .default(0)
    .describe('Delay between steps in milliseconds; 0 sends them back to back with no timer in between.'),
  bytes: z.number().int().min(0).max(EMIT_MAX_BYTES).default(0).describe("Size of the 'x' padding carried by each log message (data.pad)."),
});

const emitOutput = z.object({
  emitted: z.number().int().describe('Number of steps emitted (equals count).'),
});

/**
 * `emit`, a load/ordering generator for stream-continuity tests.
 *
 * The rule, for step `i` = 0 … count-1 (seq = i + 1):
 * 1. a `notifications/message` at level `info`, logger `emit`, with
 *    `data: { seq, pad: 'x'.repeat(bytes) }` — always, subject only to the
 *    session's `logging/setLevel` filter (info passes unless the client raised it; on the
 *    stateless leg, to the level the request's `_meta` carries);
 * 2. then, only if the request carries `_meta.progressToken`, a
 *    `notifications/progress` with `progress: seq, total: count`.
 *
 * Everything is sent as related to the
 * call and travels on the call's stream, ahead of the result. Each send is
 * awaited (keeping order and letting a transport apply backpressure) but with
 * `intervalMs: 0` no timer separates the steps, so a fast transport emits the
 * whole burst within the same millisecond. The result is the text
 * `emitted <count>` with `structuredContent: { emitted: count }`.
 * A cancelled call stops at the next step.
 */
export const emitTool: ExampleTool = defineTool({
  name: 'emit',
  description:
    'Emits `count` notifications related to this call (log messages, plus progress when a ' +
    'progress token is given), optionally spaced by `intervalMs` and padded by `bytes`.',
  inputSchema: emitInput,
  outputSchema: emitOutput,
  async run({ count, intervalMs, bytes }, ctx) {
    if (count * bytes > EMIT_MAX_TOTAL_BYTES) {
      throw new ToolInputError(`count × bytes is at most ${EMIT_MAX_TOTAL_BYTES} (256 MiB)`, { limit: EMIT_MAX_TOTAL_BYTES });
    }
    // One shared string: the padding is built once, not once per notification.
    const pad = 'x'.repeat(bytes);
    for (let i = 0; i < count; i++) {
      if (intervalMs > 0 && i > 0) await sleep(intervalMs, undefined, { signal: ctx.signal });
      // Sends are silently dropped after cancellation; stop instead of spinning.
      ctx.signal.throwIfAborted();
      const seq = i + 1;
      await ctx.log('info', { seq, pad }, 'emit');
      if (ctx.progressToken !== undefined) await ctx.progress(seq, count);
    }
    return { content: [{ type: 'text', text: `emitted ${count}` }], structuredContent: { emitted: count } };
  },
});
