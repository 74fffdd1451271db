/** Cross-session leaks: session B presenting session A's cursor must receive nothing of A's. */
import { Header } from '../../protocol/headers.js';
import { fail, notApplicable, pass, refuses, type Check } from './check.js';
import { findLeaks } from './leak.js';
import { callTool, closeSession, messages, openSession, sessionHeaders } from './session.js';
import { reasonOf } from './stream-run.js';
import { exchange } from './wire.js';

/** Request IDs of session A start here, far from B's, so an answer to one is unmistakably A's. */
const A_IDS = 7_000_001;

export const foreignCursor: Check = {
  id: 'foreign-cursor',
  title: "Another session's cursor leaks nothing",
  guards: "one session's events (messages, responses, progress, payloads) replayed to another session that presents its cursor",
  session: true,
  severity: 'loss',
  async run(ctx) {
    const a = await openSession(ctx);
    try {
      a.nextId = A_IDS;
      const tool = ctx.tool?.stream === 'post' ? ctx.tool : undefined;
      const sent = tool ? await callTool(ctx, a, tool, 5, ctx.intervalMs) : { id: a.nextId++, exchange: undefined };
      const source =
        sent.exchange ??
        (await exchange({ method: 'POST', url: ctx.url, headers: sessionHeaders(a), body: { jsonrpc: '2.0', id: sent.id, method: 'ping' } }, ctx.timeoutMs));
      const cursor = source.events.find((e) => e.id)?.id;
      if (cursor === undefined) return notApplicable('the server sent no event IDs on a POST stream', [source.evidence]);
      const b = await openSession(ctx);
      try {
        const resume = await exchange(
          { method: 'GET', url: ctx.url, headers: sessionHeaders(b, { [Header.LastEventId]: cursor }), idleMs: 1000 },
          ctx.timeoutMs,
        );
        const evidence = [source.evidence, resume.evidence];
        const leaks = findLeaks(messages(source.events), messages(resume.events), {
          requestIds: [sent.id],
          progressTokens: [`probe-${sent.id}`],
          sessionId: a.id,
        });
        if (leaks.length > 0)
          return fail(
            `session B received ${leaks.length} of session A's messages by presenting A's cursor: ${[...new Set(leaks)].slice(0, 3).join('; ')}`,
            evidence,
          );
        if (refuses(resume.status)) return pass(`refused with HTTP ${resume.status} (${reasonOf(resume)})`, evidence);
        return pass(`nothing of session A's reached B (but HTTP ${resume.status} rather than a refusal)`, evidence);
      } finally {
        await closeSession(ctx, b);
      }
    } finally {
      await closeSession(ctx, a);
    }
  },
};
