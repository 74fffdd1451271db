import { setTimeout as sleep } from 'node:timers/promises';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestLogger } from '../logging.js';

/** Pause between the steps of the logging and progress tools (the scenarios ask for ~50 ms). */
const STEP_DELAY_MS = 50;

/**
 * How long `test_reconnection` keeps working after closing its stream: long
 * enough that the result is produced while the client is disconnected, short
 * enough that a client honouring a small `retry` is back before it is sent.
 */
const RECONNECT_DELAY_MS = 150;

/**
 * Registers the tools that emit notifications during a call:
 * `test_tool_with_logging`, `test_tool_with_progress` and `test_reconnection`.
 * Everything is sent with `extra.sendNotification`, i.e. on the call's own stream.
 */
export function registerNotificationTools(server: McpServer, logs: RequestLogger): void {
  server.registerTool('test_tool_with_logging', { description: 'Sends three info log messages, ~50 ms apart, while it runs.' }, async (extra) => {
    await logs.log(extra, 'info', 'Tool execution started', 'test_tool_with_logging');
    await sleep(STEP_DELAY_MS, undefined, { signal: extra.signal });
    await logs.log(extra, 'info', 'Tool processing data', 'test_tool_with_logging');
    await sleep(STEP_DELAY_MS, undefined, { signal: extra.signal });
    await logs.log(extra, 'info', 'Tool execution completed', 'test_tool_with_logging');
    return { content: [{ type: 'text', text: 'Tool with logging executed successfully' }] };
  });

  server.registerTool(
    'test_tool_with_progress',
    {
      description: 'Reports progress 0/100, 50/100 and 100/100, ~50 ms apart, when the request carries a progress token.',
    },
    async (extra) => {
      const progressToken = extra._meta?.progressToken;
      const steps = [0, 50, 100];
      for (const [index, progress] of steps.entries()) {
        if (index > 0) await sleep(STEP_DELAY_MS, undefined, { signal: extra.signal });
        // Without a token the client did not ask for progress; the delays still run.
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100 },
          });
        }
      }
      return { content: [{ type: 'text', text: 'Tool with progress executed successfully' }] };
    },
  );

  server.registerTool(
    'test_reconnection',
    {
      description:
        "Closes the call's SSE stream mid-call (SEP-1699 polling), then returns its result " +
        'shortly after, so the client receives it only by resuming with Last-Event-ID.',
    },
    async (extra) => {
      // Only transports that can replay (an event store) offer closeSSEStream;
      // elsewhere closing would lose the result, so the tool just answers.
      const closed = extra.closeSSEStream !== undefined;
      extra.closeSSEStream?.();
      await sleep(RECONNECT_DELAY_MS, undefined, { signal: extra.signal });
      return {
        content: [
          {
            type: 'text',
            text: closed
              ? 'Reconnection test completed: the stream was closed mid-call and the result sent afterwards.'
              : 'Reconnection test completed: this transport cannot close the stream mid-call.',
          },
        ],
      };
    },
  );
}
