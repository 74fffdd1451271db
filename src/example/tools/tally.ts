import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestLogger } from '../logging.js';

/**
 * Where `tally` records each run, one line `<id>` per run: set by whoever runs `serve`
 * (the lifecycle harness), never by a client, so a call cannot choose what is written where.
 */
export const TALLY_FILE_ENV = 'MCPC_TALLY_FILE';

/** Runs remembered per session for the result's `runs`; past it the oldest id is forgotten. */
const MAX_IDS = 1_000;

const tallyInput = {
  id: z.string().min(1).max(64).describe('The call id whose runs are counted.'),
  steps: z.number().int().min(0).max(100).default(3).describe('How many steps to log.'),
  intervalMs: z.number().int().min(0).max(1_000).default(0).describe('Delay between steps in milliseconds.'),
};

/**
 * Registers `tally`, a counting tool for at-most-once checks across processes: each run
 * first appends its `id` to the file named by `MCPC_TALLY_FILE` (if set), synchronously, so
 * a run is on record before it can send anything, even if the process is killed next.
 * Then, for step seq = 1 … steps, a `warning` log `{ id, seq }` and an `info` log
 * `{ id, seq, filtered: true }` (logger `tally`): a client that set its level to `warning`
 * must never receive the second, so receiving it shows the session lost its log level.
 * The result carries `structuredContent: { id, runs }`, the runs of `id` in this session.
 */
export function registerTallyTool(server: McpServer, logs: RequestLogger): void {
  const runs = new Map<string, number>();
  const file = typeof process === 'undefined' ? undefined : process.env[TALLY_FILE_ENV];
  server.registerTool(
    'tally',
    {
      description: 'Counts its runs per id (and records each run where the operator said), logging `steps` warnings and filtered infos.',
      inputSchema: tallyInput,
      outputSchema: { id: z.string(), runs: z.number().int() },
    },
    async ({ id, steps, intervalMs }, extra) => {
      if (file) appendFileSync(file, `${id}\n`);
      if (!runs.has(id) && runs.size >= MAX_IDS) runs.delete(runs.keys().next().value as string);
      const count = (runs.get(id) ?? 0) + 1;
      runs.set(id, count);
      for (let seq = 1; seq <= steps; seq++) {
        if (intervalMs > 0 && seq > 1) await sleep(intervalMs, undefined, { signal: extra.signal });
        extra.signal.throwIfAborted();
        await logs.log(extra, 'warning', { id, seq }, 'tally');
        await logs.log(extra, 'info', { id, seq, filtered: true }, 'tally');
      }
      return { content: [{ type: 'text', text: `${id} ran ${count}` }], structuredContent: { id, runs: count } };
    },
  );
}
