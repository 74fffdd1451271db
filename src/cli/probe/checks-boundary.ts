/** Checks across boundaries: a server restart, another replica, the SSE→WebSocket upgrade. */
import { Header } from '../../protocol/headers.js';
import { restartServer } from './restart.js';
import { judgeAcrossBoundary } from './verdicts.js';
import { fail, notApplicable, pass, type Check, type CheckContext, type Outcome } from './check.js';
import { closeSession, openSession, sessionHeaders } from './session.js';
import { cutAndResume, reasonOf, reference, terminalError, type RunOptions } from './stream-run.js';
import { exchange } from './wire.js';

/**
 * Read a call to its end, do `between`, resume from a third of the way in at `resumeUrl`:
 * an explicit refusal or an exact continuation passes; any hole, duplicate or reordering
 * fails, even when an error response ends the stream.
 */
async function acrossBoundary(ctx: CheckContext, what: string, between: (() => Promise<void>) | undefined, resumeUrl?: URL): Promise<Outcome> {
  const tool = ctx.tool;
  if (!tool || tool.stream !== 'post') return notApplicable('needs a tool that streams on its call (see resume-post)');
  const session = await openSession(ctx);
  try {
    const ref = await reference(ctx, session, tool);
    const options: RunOptions = { completed: true };
    if (between) options.between = between;
    if (resumeUrl) options.resumeUrl = resumeUrl;
    const run = await cutAndResume(ctx, session, tool, ref.keys, options);
    if ('refusedCall' in run) return notApplicable('the call stream carried no event IDs', [run.refusedCall.evidence]);
    const { resume, timeline, evidence } = run;
    const judged = judgeAcrossBoundary(what, { status: resume.status, reason: reasonOf(resume), timeline, terminal: terminalError(resume) });
    return { ...judged, evidence, timeline };
  } finally {
    await closeSession(ctx, session);
  }
}

export const restart: Check = {
  id: 'restart',
  title: 'Resume across a server restart',
  guards: 'a restarted process answering 200 to old cursors: a gap with continuous-looking IDs',
  session: true,
  severity: 'loss',
  async run(ctx) {
    const command = ctx.restartCmd;
    if (command === undefined) return notApplicable('no --restart-cmd given');
    return acrossBoundary(ctx, 'after --restart-cmd', () => restartServer(ctx, command));
  },
};

export const replica: Check = {
  id: 'replica',
  title: 'Resume on another replica',
  guards: 'a load balancer sending the resume to a replica without the log: replay from zero or an empty stream',
  session: true,
  severity: 'loss',
  async run(ctx) {
    const outcomes: Outcome[] = [];
    for (const url of ctx.replicas) outcomes.push(await acrossBoundary(ctx, `on ${url.href}`, undefined, url));
    if (outcomes.length === 0) return notApplicable('no --replica given');
    const failed = outcomes.find((o) => o.verdict === 'FAIL' && o.severity === 'loss') ?? outcomes.find((o) => o.verdict === 'FAIL');
    const shown = failed ?? outcomes[0];
    return { ...(shown as Outcome), detail: outcomes.map((o) => o.detail).join('; ') };
  },
};

export const upgradeBoundary: Check = {
  id: 'upgrade-boundary',
  title: 'Resume refused after an upgrade offer',
  guards: 'a resume during a half-finished WebSocket upgrade: deadlock, dual negotiation or a replay as if nothing happened',
  session: true,
  severity: 'deviation',
  async run(ctx) {
    const session = await openSession(ctx);
    try {
      const offer = await exchange(
        {
          method: 'GET',
          url: ctx.url,
          headers: sessionHeaders(session, { 'x-mcp-upgrade': 'websocket' }),
          cutWhen: (e) => e.some((x) => x.event === 'upgrade-accepted' || x.data.includes('upgrade-accepted')),
          idleMs: 1000,
        },
        ctx.timeoutMs,
      );
      const accepted = offer.events.find((x) => x.event === 'upgrade-accepted' || x.data.includes('upgrade-accepted'));
      if (offer.status !== 200 || accepted?.id === undefined) return notApplicable('the server offers no SSE→WebSocket upgrade', [offer.evidence]);
      const resume = await exchange(
        { method: 'GET', url: ctx.url, headers: sessionHeaders(session, { [Header.LastEventId]: accepted.id }), idleMs: 1000, cutWhen: (e) => e.length > 0 },
        ctx.timeoutMs,
      );
      const evidence = [offer.evidence, resume.evidence];
      if (resume.status === 410) return pass(`refused with 410 (${reasonOf(resume)})`, evidence);
      return fail(
        `a resume at the upgrade offer got HTTP ${resume.status}${resume.status === 200 ? ` with ${resume.events.length} events` : ''}, not 410`,
        evidence,
      );
    } finally {
      await closeSession(ctx, session);
    }
  },
};
