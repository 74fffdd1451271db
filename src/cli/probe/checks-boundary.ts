/** Checks across boundaries: a server restart, another replica, the SSE→WebSocket upgrade. */
import { Header } from '../../protocol/headers.js';
import { exec } from 'node:child_process';
import { judgeAcrossBoundary } from './verdicts.js';
import { fail, notApplicable, pass, type Check, type CheckContext, type Outcome } from './check.js';
import { closeSession, openSession, sessionHeaders } from './session.js';
import { cutAndResume, reasonOf, reference, terminalError } from './stream-run.js';
import { exchange } from './wire.js';

/** Runs `command` in a shell; resolves when it exits 0. */
function runShell(command: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    exec(command, { timeout: timeoutMs }, (error, _stdout, stderr) => {
      if (error) reject(new Error(`--restart-cmd failed: ${error.message.split('\n')[0]}${stderr ? `: ${stderr.trim().slice(0, 200)}` : ''}`));
      else resolve();
    });
  });
}

/** Waits until `url` answers HTTP at all (any status). */
async function untilUp(url: URL, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url, { method: 'GET', signal: AbortSignal.timeout(1000) }).then((r) => r.body?.cancel());
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`the server did not come back within ${timeoutMs} ms of --restart-cmd`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Cut, do `between`, resume at `resumeUrl`: an explicit refusal or exact continuation passes. */
async function acrossBoundary(ctx: CheckContext, what: string, between: (() => Promise<void>) | undefined, resumeUrl?: URL): Promise<Outcome> {
  const tool = ctx.tool;
  if (!tool || tool.stream !== 'post') return notApplicable('needs a tool that streams on its call (see resume-post)');
  const session = await openSession(ctx);
  try {
    const ref = await reference(ctx, session, tool);
    const options: Parameters<typeof cutAndResume>[4] = {};
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
  async run(ctx) {
    const command = ctx.restartCmd;
    if (command === undefined) return notApplicable('no --restart-cmd given');
    return acrossBoundary(ctx, 'after --restart-cmd', async () => {
      await runShell(command, ctx.timeoutMs * 3);
      await untilUp(ctx.url, ctx.timeoutMs * 3);
    });
  },
};

export const replica: Check = {
  id: 'replica',
  title: 'Resume on another replica',
  guards: 'a load balancer sending the resume to a replica without the log: replay from zero or an empty stream',
  session: true,
  async run(ctx) {
    const outcomes: Outcome[] = [];
    for (const url of ctx.replicas) outcomes.push(await acrossBoundary(ctx, `on ${url.href}`, undefined, url));
    if (outcomes.length === 0) return notApplicable('no --replica given');
    const failed = outcomes.find((o) => o.verdict === 'FAIL');
    const shown = failed ?? outcomes[0];
    return { ...(shown as Outcome), detail: outcomes.map((o) => o.detail).join('; ') };
  },
};

export const upgradeBoundary: Check = {
  id: 'upgrade-boundary',
  title: 'Resume refused after an upgrade offer',
  guards: 'a resume during a half-finished WebSocket upgrade: deadlock, dual negotiation or a replay as if nothing happened',
  session: true,
  async run(ctx) {
    const session = await openSession(ctx);
    try {
      const offer = await exchange(
        { method: 'GET', url: ctx.url, headers: sessionHeaders(session, { 'x-mcp-upgrade': 'websocket' }), cutWhen: (e) => e.some((x) => x.event === 'upgrade-accepted' || x.data.includes('upgrade-accepted')), idleMs: 1000 },
        ctx.timeoutMs,
      );
      const accepted = offer.events.find((x) => x.event === 'upgrade-accepted' || x.data.includes('upgrade-accepted'));
      if (offer.status !== 200 || accepted?.id === undefined) return notApplicable('the server offers no SSE→WebSocket upgrade', [offer.evidence]);
      const resume = await exchange({ method: 'GET', url: ctx.url, headers: sessionHeaders(session, { [Header.LastEventId]: accepted.id }), idleMs: 1000, cutWhen: (e) => e.length > 0 }, ctx.timeoutMs);
      const evidence = [offer.evidence, resume.evidence];
      if (resume.status === 410) return pass(`refused with 410 (${reasonOf(resume)})`, evidence);
      return fail(`a resume at the upgrade offer got HTTP ${resume.status}${resume.status === 200 ? ` with ${resume.events.length} events` : ''}, not 410`, evidence);
    } finally {
      await closeSession(ctx, session);
    }
  },
};
