/**
 * The probe's one experiment, shared by the resume checks: stream a tool call, cut it part
 * way, optionally do something (restart the server, switch replica), resume with the last
 * event ID, and compare what arrived with what an uncut call delivers.
 */
import { Header } from '../../protocol/headers.js';
import { analyzeTimeline, eventKey, type Timeline } from './model.js';
import type { CheckContext } from './check.js';
import { callTool, messages, payloadEvents, responseTo, sessionHeaders, type ProbeSession, type ToolPlan } from './session.js';
import { exchange, messageOf, type Exchange, type SseEvent } from './wire.js';

/** Waits before each new resume while the server answers 409 (it still holds the cut stream). */
const CONFLICT_RETRY_MS = [50, 200, 500];

/** What happened across one cut and resume. */
export interface StreamRun {
  timeline: Timeline;
  /** The resume's answer. */
  resume: Exchange;
  /** The cursor sent as Last-Event-ID. */
  cursor: string;
  /** Every event ID seen (before and after), in order. */
  ids: string[];
  evidence: string[];
}

/** Keys of a call's events; its response is just "response", so calls with different ids compare. */
function callKeys(events: Parameters<typeof messages>[0]): string[] {
  return messages(events).map((m) => ('result' in m || 'error' in m ? 'response' : eventKey(m)));
}

/** The keys of an uncut call: what a resume must reproduce. */
export async function reference(ctx: CheckContext, session: ProbeSession, tool: ToolPlan): Promise<{ keys: string[]; call: Exchange }> {
  const { exchange: call } = await callTool(ctx, session, tool, ctx.events, ctx.intervalMs);
  return { keys: callKeys(call.events), call };
}

/** How a run sets its cursor: a live cut, or a call read to its end with the cursor placed part way. */
export interface RunOptions {
  between?: () => Promise<void>;
  resumeUrl?: URL;
  /**
   * Read the whole call (its result arrived: every event exists on the server) and resume
   * from the cursor a third of the way in. Nothing is then excusable as never sent: the
   * resume must replay exactly the rest, or refuse with a 4xx.
   */
  completed?: boolean;
}

/** The events up to and including the `n`-th that carries an ID and a message. */
function firstPayloads(events: readonly SseEvent[], n: number): SseEvent[] {
  let seen = 0;
  const out: SseEvent[] = [];
  for (const e of events) {
    out.push(e);
    if (e.id !== undefined && e.id !== '' && messageOf(e) !== undefined && ++seen >= n) break;
  }
  return out;
}

/**
 * Cuts `tool`'s POST stream after a third of its events (or, with `completed`, reads it
 * whole and takes the cursor there), runs `between`, and resumes with GET + Last-Event-ID
 * at `resumeUrl` (default: the session's URL).
 */
export async function cutAndResume(
  ctx: CheckContext,
  session: ProbeSession,
  tool: ToolPlan,
  expected: string[],
  options: RunOptions = {},
): Promise<StreamRun | { refusedCall: Exchange }> {
  const cutAfter = Math.max(1, Math.floor(ctx.events / 3));
  const { id, exchange: call } = options.completed
    ? await callTool(ctx, session, tool, ctx.events, ctx.intervalMs)
    : await callTool(ctx, session, tool, ctx.events, ctx.intervalMs, (events) => payloadEvents(events).length >= cutAfter);
  if (call.status !== 200 || call.ended === 'not-sse') return { refusedCall: call };
  const seen = options.completed ? firstPayloads(call.events, cutAfter) : call.events;
  const withIds = seen.filter((e) => e.id !== undefined && e.id !== '');
  const cursor = withIds.at(-1)?.id;
  if (cursor === undefined) return { refusedCall: call };
  await options.between?.();
  const resumeOnce = (): Promise<Exchange> =>
    exchange(
      {
        method: 'GET',
        url: options.resumeUrl ?? session.url,
        headers: sessionHeaders(session, { [Header.LastEventId]: cursor }),
        cutWhen: (events) => responseTo(events, id) !== undefined,
        idleMs: Math.max(2000, ctx.intervalMs * 20),
      },
      ctx.timeoutMs + ctx.events * ctx.intervalMs,
    );
  // A server that has not yet seen the cut connection close may still hold the stream and
  // answer 409; a real client reconnects after a delay, so the probe does too before judging.
  const conflicts: Exchange[] = [];
  let resume = await resumeOnce();
  for (const delayMs of CONFLICT_RETRY_MS) {
    if (resume.status !== 409) break;
    conflicts.push(resume);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    resume = await resumeOnce();
  }
  const before = callKeys(seen);
  const after = resume.status === 200 ? callKeys(resume.events) : [];
  const ids = [...withIds, ...resume.events].map((e) => e.id).filter((x): x is string => x !== undefined && x !== '');
  return {
    timeline: analyzeTimeline(expected, before, after),
    resume,
    cursor,
    ids,
    evidence: [call.evidence, ...conflicts.map((c) => c.evidence), resume.evidence],
  };
}

/** The `error.data.reason` (or message) of a JSON refusal, for the report. */
export function reasonOf(resume: Exchange): string {
  const error = (resume.json as { error?: { message?: string; data?: { reason?: string } } } | undefined)?.error;
  return error?.data?.reason ?? error?.message ?? 'no JSON-RPC error body';
}

/** A terminal JSON-RPC error on the resumed stream (e.g. `request-abandoned` after a restart). */
export function terminalError(resume: Exchange): string | undefined {
  for (const m of messages(resume.events)) {
    const error = m['error'] as { message?: string; data?: { reason?: string } } | undefined;
    if (error) return error.data?.reason ?? error.message ?? 'error';
  }
  return undefined;
}
