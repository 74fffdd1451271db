import { setTimeout as sleep } from 'node:timers/promises';
import { text, type ExampleTool } from './table.js';

/** Pause between the steps of the logging and progress tools (the scenarios ask for ~50 ms). */
const STEP_DELAY_MS = 50;

/**
 * How long `test_reconnection` keeps working after closing its stream: long
 * enough that the result is produced while the client is disconnected, short
 * enough that a client honouring a small `retry` is back before it is sent.
 */
const RECONNECT_DELAY_MS = 150;

/**
 * The tools that emit notifications during a call: `test_tool_with_logging`,
 * `test_tool_with_progress` and `test_reconnection`. Everything is sent on the call's
 * own stream.
 */
export const notificationTools: readonly ExampleTool[] = [
  {
    name: 'test_tool_with_logging',
    description: 'Sends three info log messages, ~50 ms apart, while it runs.',
    async run(_args, ctx) {
      for (const [index, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
        if (index > 0) await sleep(STEP_DELAY_MS, undefined, { signal: ctx.signal });
        await ctx.log('info', message, 'test_tool_with_logging');
      }
      return text('Tool with logging executed successfully');
    },
  },
  {
    name: 'test_tool_with_progress',
    description: 'Reports progress 0/100, 50/100 and 100/100, ~50 ms apart, when the request carries a progress token.',
    async run(_args, ctx) {
      for (const [index, progress] of [0, 50, 100].entries()) {
        if (index > 0) await sleep(STEP_DELAY_MS, undefined, { signal: ctx.signal });
        // Without a token the client did not ask for progress; the delays still run.
        if (ctx.progressToken !== undefined) await ctx.progress(progress, 100);
      }
      return text('Tool with progress executed successfully');
    },
  },
  {
    name: 'test_reconnection',
    description:
      "Closes the call's SSE stream mid-call (SEP-1699 polling), then returns its result " +
      'shortly after, so the client receives it only by resuming with Last-Event-ID.',
    async run(_args, ctx) {
      // Only transports that can replay (an event store) can close the stream; elsewhere
      // (the stateless leg among them) closing would lose the result, so the tool just answers.
      const closed = ctx.closeStream !== undefined;
      ctx.closeStream?.();
      await sleep(RECONNECT_DELAY_MS, undefined, { signal: ctx.signal });
      return text(
        closed
          ? 'Reconnection test completed: the stream was closed mid-call and the result sent afterwards.'
          : 'Reconnection test completed: this transport cannot close the stream mid-call.',
      );
    },
  },
];
