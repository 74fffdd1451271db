import { appendFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import * as z from 'zod';
import { defineTool, type ExampleTool } from './table.js';

/**
 * Where `tally` records each run, one line `<id>` per run: set by whoever runs `serve`
 * (the lifecycle harness), never by a client, so a call cannot choose what is written where.
 */
export const TALLY_FILE_ENV = 'MCPC_TALLY_FILE';

/** Runs remembered per server for the result's `runs`; past it the oldest id is forgotten. */
const MAX_IDS = 1_000;

const tallyInput = z.object({
  id: z.string().min(1).max(64).describe('The call id whose runs are counted.'),
  steps: z.number().int().min(0).max(100).default(3).describe('How many steps to log.'),
  intervalMs: z.number().int().min(0).max(1_000).default(0).describe('Delay between steps in milliseconds.'),
});

/**
 * `tally`, a counting tool for at-most-once checks across processes: each run
 * first appends its `id` to the file named by `MCPC_TALLY_FILE` (if set), synchronously, so
 * a run is on record before it can send anything, even if the process is killed next.
 * Then, for step seq = 1 … steps, a `warning` log `{ id, seq }` and an `info` log
 * `{ id, seq, filtered: true }` (logger `tally`): a client that set its level to `warning`
 * must never receive the second, so receiving it shows the session lost its log level.
 * The result carries `structuredContent: { id, runs }`, the runs of `id` in `runs`: per
 * session on the 2025-era leg (a server per session), per handler (so per process) on the
 * stateless leg, which has no session.
 */
export function tallyTool(runs = new Map<string, number>()): ExampleTool {
  const file = typeof process === 'undefined' ? undefined : process.env[TALLY_FILE_ENV];
  return defineTool({
    name: 'tally',
    description: 'Counts its runs per id (and records each run where the operator said), logging `steps` warnings and filtered infos.',
    inputSchema: tallyInput,
    outputSchema: z.object({ id: z.string(), runs: z.number().int() }),
    async run({ id, steps, intervalMs }, ctx) {
      if (file) appendFileSync(file, `${id}\n`);
      if (!runs.has(id) && runs.size >= MAX_IDS) runs.delete(runs.keys().next().value as string);
      const count = (runs.get(id) ?? 0) + 1;
      runs.set(id, count);
      for (let seq = 1; seq <= steps; seq++) {
        if (intervalMs > 0 && seq > 1) await sleep(intervalMs, undefined, { signal: ctx.signal });
        ctx.signal.throwIfAborted();
        await ctx.log('warning', { id, seq }, 'tally');
        await ctx.log('info', { id, seq, filtered: true }, 'tally');
      }
      return { content: [{ type: 'text', text: `${id} ran ${count}` }], structuredContent: { id, runs: count } };
    },
  });
}
