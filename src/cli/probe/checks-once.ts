/**
 * At most once across replicas: a tool call cut mid-stream and resumed on another replica
 * must not run again there. Needs a countable tool (`--tool`): one whose result carries
 * `structuredContent.runs`, how many times it has run in this session, this run included.
 */
import { Header } from '../../protocol/headers.js';
import { fail, notApplicable, pass, type Check, type CheckContext } from './check.js';
import { callTool, closeSession, openSession, payloadEvents, responseTo, sessionHeaders, type ProbeSession } from './session.js';
import { exchange, type Exchange } from './wire.js';

/** The run count a result reports, if any. */
export function runsOf(answer: Record<string, unknown> | undefined): number | undefined {
  const runs = (answer?.['result'] as { structuredContent?: { runs?: unknown } } | undefined)?.structuredContent?.runs;
  return typeof runs === 'number' && Number.isInteger(runs) ? runs : undefined;
}

function answerOf(x: Exchange, id: number): Record<string, unknown> | undefined {
  return (x.json as Record<string, unknown> | undefined) ?? responseTo(x.events, id);
}

/** One complete call; its run count. */
async function count(ctx: CheckContext, session: ProbeSession): Promise<{ runs: number | undefined; evidence: string }> {
  const tool = ctx.tool;
  if (!tool) return { runs: undefined, evidence: '' };
  const { id, exchange: call } = await callTool(ctx, session, tool, ctx.events, ctx.intervalMs);
  return { runs: runsOf(answerOf(call, id)), evidence: call.evidence };
}

export const atMostOnce: Check = {
  id: 'at-most-once',
  title: 'A call resumed on another replica runs at most once',
  guards: 'a replica that runs a tool call again when its stream is resumed there: side effects twice, silently',
  session: true,
  severity: 'loss',
  async run(ctx) {
    const tool = ctx.tool;
    if (ctx.replicas.length === 0) return notApplicable('no --replica given');
    if (!tool || tool.stream !== 'post') return notApplicable('needs --tool naming a countable tool (its result carries structuredContent.runs)');
    const session = await openSession(ctx);
    try {
      const first = await count(ctx, session);
      if (first.runs === undefined) return notApplicable(`${tool.name} is not countable: its result carries no structuredContent.runs`, [first.evidence]);
      const evidence = [first.evidence];
      let expected = first.runs;
      for (const replica of ctx.replicas) {
        const { id, exchange: cut } = await callTool(ctx, session, tool, ctx.events, ctx.intervalMs, (e) => payloadEvents(e).length >= 1);
        expected++;
        evidence.push(cut.evidence);
        const cursor = cut.events.filter((e) => e.id).at(-1)?.id;
        if (cursor !== undefined) {
          const resumed = await exchange(
            {
              method: 'GET',
              url: replica,
              headers: sessionHeaders(session, { [Header.LastEventId]: cursor }),
              cutWhen: (e) => responseTo(e, id) !== undefined,
              idleMs: Math.max(2000, ctx.intervalMs * 20),
            },
            ctx.timeoutMs + ctx.events * ctx.intervalMs,
          );
          evidence.push(resumed.evidence);
          const runs = runsOf(responseTo(resumed.events, id));
          if (runs !== undefined && runs > expected)
            return fail(`resumed on ${replica.href}, the cut call reported run ${runs}, not ${expected}: it ran again`, evidence);
        }
        const there = { ...session, url: replica };
        const next = await count(ctx, there);
        session.nextId = there.nextId;
        expected++;
        evidence.push(next.evidence);
        if (next.runs !== undefined && next.runs > expected)
          return fail(`on ${replica.href} the tool has run ${next.runs} times where ${expected} calls were made: a call ran more than once`, evidence);
      }
      return pass(`${expected - first.runs + 1} calls, ${expected - first.runs + 1} runs, across ${ctx.replicas.length} replica(s)`, evidence);
    } finally {
      await closeSession(ctx, session);
    }
  },
};
