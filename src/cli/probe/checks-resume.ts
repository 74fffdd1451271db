/** Checks on resumption: priming, exact resume on POST and GET streams, bursts, cursors, IDs. */
import { Header } from '../../protocol/headers.js';
import { analyzeTimeline, describeTimeline, eventKey, intact } from './model.js';
import { fail, notApplicable, pass, type Check, type CheckContext } from './check.js';
import { callTool, closeSession, messages, openSession, payloadEvents, sessionHeaders, type ProbeSession } from './session.js';
import { cutAndResume, reasonOf, reference } from './stream-run.js';
import { judgeForgedCursor, judgeResume } from './verdicts.js';
import { exchange, type SseEvent } from './wire.js';

/** Runs `body` on a fresh session, closing it afterwards. */
async function withSession<T>(ctx: CheckContext, body: (session: ProbeSession) => Promise<T>, version?: string): Promise<T> {
  const session = await openSession(ctx, version);
  try {
    return await body(session);
  } finally {
    await closeSession(ctx, session);
  }
}

export const noTool = 'no streaming tool found (emit, trigger-long-running-operation, start-notification-stream); name one with --tool NAME --args JSON';

export const priming: Check = {
  id: 'priming',
  title: 'Priming event and retry: (2025-11-25)',
  guards: 'a stream cut before its first event that the client can never resume (no ID to resume from)',
  session: true,
  severity: 'deviation',
  run: (ctx) =>
    withSession(ctx, async (session) => {
      if (session.protocolVersion < '2025-11-25') return notApplicable(`the server negotiated ${session.protocolVersion}; priming is a 2025-11-25 rule`);
      const post = await exchange(
        { method: 'POST', url: ctx.url, headers: sessionHeaders(session), body: { jsonrpc: '2.0', id: session.nextId++, method: 'ping' } },
        ctx.timeoutMs,
      );
      if (post.ended === 'not-sse') return notApplicable('the server answers POSTs with JSON, not a stream', [post.evidence]);
      const first = post.events[0];
      const primed = first !== undefined && first.id !== undefined && first.id !== '' && first.data.trim() === '';
      const retry = post.events.some((e) => e.retry !== undefined);
      if (!primed) return fail('the first event of the POST stream is not a priming event (an ID with empty data)', [post.evidence]);
      if (!retry) return { ...fail('no retry: field on the stream: clients cannot pace their reconnection', [post.evidence]), severity: 'hygiene' };
      return pass(`priming event id ${first.id} with retry: ${post.events.find((e) => e.retry !== undefined)?.retry} ms`, [post.evidence]);
    }),
};

export const resumePost: Check = {
  id: 'resume-post',
  title: 'Resume a POST stream mid-call',
  guards: 'events lost, repeated or reordered when a tool-call stream is cut and resumed with Last-Event-ID',
  session: true,
  severity: 'loss',
  run: (ctx) =>
    withSession(ctx, async (session) => {
      const tool = ctx.tool;
      if (!tool || tool.stream !== 'post') return notApplicable(tool ? `${tool.name} streams on the GET stream, not the call's` : noTool);
      const ref = await reference(ctx, session, tool);
      if (ref.call.ended === 'not-sse') return notApplicable('the server answers tool calls with JSON, not a stream', [ref.call.evidence]);
      const run = await cutAndResume(ctx, session, tool, ref.keys);
      if ('refusedCall' in run)
        return { ...notApplicable('the call stream carried no event IDs to resume from', [run.refusedCall.evidence]), resumable: false };
      const judged = judgeResume({ status: run.resume.status, reason: reasonOf(run.resume), timeline: run.timeline });
      const cutAt = run.timeline.marks.findIndex((m) => m.kind === 'cut');
      return { ...judged, detail: `cut after ${cutAt} events; ${judged.detail}`, evidence: run.evidence, timeline: run.timeline };
    }),
};

export const resumeGet: Check = {
  id: 'resume-get',
  title: 'Resume the GET stream',
  guards: 'server-initiated messages lost when the standalone GET stream drops and is resumed',
  session: true,
  severity: 'loss',
  run: (ctx) =>
    withSession(ctx, async (session) => {
      const headers = sessionHeaders(session);
      const tool = ctx.tool;
      if (tool?.stream === 'get') {
        // Events go to the GET stream: read a third of them, cut, let the rest be sent, resume.
        const cutAfter = Math.max(1, Math.floor(ctx.events / 3));
        let open: () => void = () => undefined;
        const isOpen = new Promise<void>((resolve) => (open = resolve));
        const reading = exchange(
          { method: 'GET', url: ctx.url, headers, cutWhen: (e) => payloadEvents(e).length >= cutAfter, idleMs: ctx.timeoutMs, onOpen: () => open() },
          ctx.timeoutMs + ctx.events * ctx.intervalMs,
        );
        // Start the tool only once the stream is open, so every event has a reader to miss.
        await Promise.race([isOpen, reading]);
        const call = callTool(ctx, session, tool, ctx.events, ctx.intervalMs);
        const cut = await reading;
        await call;
        const cursor = cut.events.filter((e) => e.id).at(-1)?.id;
        if (cut.status !== 200 || cursor === undefined)
          return {
            ...notApplicable(`the GET stream gave no event IDs (HTTP ${cut.status})`, [cut.evidence]),
            resumable: cut.status === 200 ? false : undefined,
          };
        const resume = await exchange(
          { method: 'GET', url: ctx.url, headers: { ...headers, [Header.LastEventId]: cursor }, idleMs: Math.max(1000, ctx.intervalMs * 20) },
          ctx.timeoutMs,
        );
        const expected = Array.from({ length: ctx.events }, (_, i) => `log ${i + 1}`);
        const timeline = analyzeTimeline(expected, messages(cut.events).map(eventKey), resume.status === 200 ? messages(resume.events).map(eventKey) : []);
        return { ...judgeResume({ status: resume.status, reason: reasonOf(resume), timeline }), evidence: [cut.evidence, resume.evidence], timeline };
      }
      // Nothing to make the GET stream talk: resume from its first ID and expect a continued stream.
      const first = await exchange({ method: 'GET', url: ctx.url, headers, cutWhen: (e) => e.some((x) => x.id), idleMs: 1000 }, ctx.timeoutMs);
      if (first.status === 405) return notApplicable('the server offers no GET stream (405)', [first.evidence]);
      const cursor = first.events.find((e) => e.id)?.id;
      if (first.status !== 200 || cursor === undefined)
        return {
          ...notApplicable(`the GET stream sent no event ID to resume from (HTTP ${first.status})`, [first.evidence]),
          resumable: first.status === 200 ? false : undefined,
        };
      const resume = await exchange(
        { method: 'GET', url: ctx.url, headers: { ...headers, [Header.LastEventId]: cursor }, cutWhen: () => true, idleMs: 1000 },
        ctx.timeoutMs,
      );
      const evidence = [first.evidence, resume.evidence];
      if (resume.status !== 200)
        return {
          ...fail(`resuming the GET stream from its own priming ID got HTTP ${resume.status} (${reasonOf(resume)})`, evidence),
          severity: 'deviation',
          resumable: false,
        };
      return { ...pass('resumed the GET stream from its priming ID (no events were pending)', evidence), resumable: true };
    }),
};

/** The burst: a tool with no timer between events, or else a JSON-RPC batch (2025-03-26). */
async function burst(
  ctx: CheckContext,
  session: ProbeSession,
): Promise<{ events: SseEvent[]; evidence: string; source: string } | { none: string; evidence?: string }> {
  if (ctx.tool?.burst && ctx.tool.stream === 'post') {
    const { exchange: call } = await callTool(ctx, session, ctx.tool, BURST, 0);
    return { events: call.events, evidence: call.evidence, source: `${ctx.tool.name} with ${BURST} events and no delay` };
  }
  const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: 1000 + i, method: 'ping' }));
  const post = await exchange({ method: 'POST', url: ctx.url, headers: sessionHeaders(session), body: batch }, ctx.timeoutMs);
  if (post.status !== 200 || post.ended === 'not-sse')
    return {
      none: `no burst source: no tool sends a burst and a batch of 100 pings got HTTP ${post.status}${post.ended === 'not-sse' ? ' (JSON)' : ''}`,
      evidence: post.evidence,
    };
  return { events: post.events, evidence: post.evidence, source: 'a JSON-RPC batch of 100 pings (2025-03-26)' };
}

const BURST = 200;

export const sameMillisecond: Check = {
  id: 'burst-order',
  title: 'Burst within one millisecond resumes in order',
  guards: 'events sent in the same millisecond replayed out of order or dropped (IDs that sort by timestamp)',
  session: true,
  severity: 'loss',
  async run(ctx) {
    // The batch needs 2025-03-26, the last revision with batches; a burst tool works on any.
    const version = ctx.tool?.burst ? undefined : '2025-03-26';
    return withSession(
      ctx,
      async (session) => {
        const source = await burst(ctx, session);
        if ('none' in source) return notApplicable(source.none, source.evidence ? [source.evidence] : []);
        const withPayload = payloadEvents(source.events);
        const first = withPayload[0];
        if (first?.id === undefined) return { ...notApplicable('the burst carried no event IDs', [source.evidence]), resumable: false };
        const keys = withPayload.map((e) => eventKey(messages([e])[0] ?? {}));
        const resume = await exchange(
          { method: 'GET', url: ctx.url, headers: sessionHeaders(session, { [Header.LastEventId]: first.id }), idleMs: 1500 },
          ctx.timeoutMs,
        );
        const after = resume.status === 200 ? messages(resume.events).map(eventKey) : [];
        const timeline = analyzeTimeline(keys, [keys[0] ?? ''], after);
        const evidence = [source.evidence, resume.evidence];
        if (resume.status !== 200)
          return {
            ...fail(`resuming after the first event of ${source.source} got HTTP ${resume.status} (${reasonOf(resume)})`, evidence, timeline),
            severity: 'deviation',
            resumable: false,
          };
        if (!intact(timeline))
          return { ...fail(`${source.source}, resumed after the first: ${describeTimeline(timeline)}`, evidence, timeline), resumable: true };
        return { ...pass(`${source.source}, resumed after the first: ${describeTimeline(timeline)}`, evidence, timeline), resumable: true };
      },
      version,
    );
  },
};

export const unknownCursor: Check = {
  id: 'unknown-cursor',
  title: 'Unknown or forged cursor refused explicitly',
  guards: 'a silent 200 with an empty or restarted stream for a cursor the server cannot honour',
  session: true,
  severity: 'loss',
  run: (ctx) =>
    withSession(ctx, async (session) => {
      const evidence: string[] = [];
      for (const cursor of ['mcp-continuity-probe-forged-cursor', '0']) {
        const resume = await exchange(
          { method: 'GET', url: ctx.url, headers: sessionHeaders(session, { [Header.LastEventId]: cursor }), idleMs: 1000, cutWhen: (e) => e.length > 0 },
          ctx.timeoutMs,
        );
        evidence.push(resume.evidence);
        if (resume.status === 405) return notApplicable('the server offers no GET stream (405)', evidence);
        const judged = judgeForgedCursor(cursor, resume.status, messages(resume.events).length);
        if (judged.verdict === 'FAIL') return { ...judged, evidence };
      }
      return pass('forged cursors got explicit 4xx refusals', evidence);
    }),
};

export const idsIncrease: Check = {
  id: 'event-ids',
  title: 'No replay from zero; event IDs never repeat',
  guards: 'a resume that starts the stream over, or IDs reused so that deduplication drops new events',
  session: true,
  severity: 'loss',
  run: (ctx) =>
    withSession(ctx, async (session) => {
      const tool = ctx.tool;
      if (!tool || tool.stream !== 'post') return notApplicable(tool ? `${tool.name} streams on the GET stream` : noTool);
      const ref = await reference(ctx, session, tool);
      const run = await cutAndResume(ctx, session, tool, ref.keys);
      if ('refusedCall' in run) return notApplicable('the call stream carried no event IDs', [run.refusedCall.evidence]);
      if (run.resume.status !== 200) return notApplicable(`the resume was refused (HTTP ${run.resume.status}); see resume-post`, run.evidence);
      const repeated = run.ids.filter((id, i) => run.ids.indexOf(id) !== i);
      const firstAfter = messages(run.resume.events)[0];
      const fromZero = firstAfter !== undefined && ref.keys.length > 0 && eventKey(firstAfter) === ref.keys[0];
      if (fromZero) return fail('the resume replayed the stream from its first event', run.evidence, run.timeline);
      if (repeated.length > 0) return fail(`event IDs repeat: ${repeated.slice(0, 3).join(', ')}`, run.evidence, run.timeline);
      return pass(`${run.ids.length} distinct IDs; the resume continued after the cursor`, run.evidence, run.timeline);
    }),
};
