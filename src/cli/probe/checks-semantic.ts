/**
 * Semantic continuity: what a client set on its session (the log level, a resource
 * subscription) must still hold after a restart (`--restart-cmd`) and on another replica
 * (`--replica`). A session that comes back without it, answering 200, is silently another
 * session; a 404 (so the client re-initializes and sets it again) is correct.
 */
import { fail, notApplicable, pass, type Check, type CheckContext, type Outcome } from './check.js';
import { restartServer } from './restart.js';
import { callTool, closeSession, messages, openSession, sessionHeaders, type ProbeSession } from './session.js';
import { exchange } from './wire.js';

/** The level that filters every ordinary log message. */
const LEVEL = 'emergency';
/** A tool that changes a resource and notifies its subscribers (our example, the conformance server). */
const UPDATE_TOOL = 'update_watched_resource';
const WATCHED = 'test://watched-resource';

/** One boundary to cross: what it is, what to do, and where the session is used after it. */
interface Boundary {
  what: string;
  cross: () => Promise<void>;
  url: URL;
}

/** `session` as seen through `url` (another replica), sharing its request counter. */
function via(session: ProbeSession, url: URL): ProbeSession {
  return url.href === session.url.href ? session : { ...session, url };
}

/** Sends a request; resolves to its status and answer. */
async function request(
  ctx: CheckContext,
  session: ProbeSession,
  method: string,
  params: unknown,
): Promise<{ status: number; evidence: string; error: unknown }> {
  const r = await exchange(
    { method: 'POST', url: session.url, headers: sessionHeaders(session), body: { jsonrpc: '2.0', id: session.nextId++, method, params } },
    ctx.timeoutMs,
  );
  const answer = (r.json ?? messages(r.events).find((m) => 'result' in m || 'error' in m)) as { error?: unknown } | undefined;
  return { status: r.status, evidence: r.evidence, error: answer?.error };
}

/** Log messages that reached a short tool call, or the status that refused it. */
async function logsOf(ctx: CheckContext, session: ProbeSession): Promise<{ status: number; logs: number; evidence: string }> {
  const tool = ctx.tool;
  if (!tool) return { status: 0, logs: 0, evidence: '' };
  const { exchange: call } = await callTool(ctx, session, tool, 3, 1);
  const logs = [...messages(call.events), ...(call.json ? [call.json as Record<string, unknown>] : [])].filter(
    (m) => m['method'] === 'notifications/message',
  ).length;
  return { status: call.status, logs, evidence: call.evidence };
}

/** Whether an update of the watched resource reaches the session's GET stream. */
async function updateArrives(ctx: CheckContext, session: ProbeSession): Promise<{ status: number; arrived: boolean; evidence: string }> {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const reading = exchange(
    {
      method: 'GET',
      url: session.url,
      headers: sessionHeaders(session),
      idleMs: 1500,
      onOpen: () => open(),
      cutWhen: (e) => messages(e).some((m) => m['method'] === 'notifications/resources/updated'),
    },
    ctx.timeoutMs,
  );
  await Promise.race([opened, reading.catch(() => undefined)]);
  await request(ctx, session, 'tools/call', { name: UPDATE_TOOL, arguments: {} });
  const r = await reading;
  return { status: r.status, arrived: messages(r.events).some((m) => m['method'] === 'notifications/resources/updated'), evidence: r.evidence };
}

/** The boundaries the options name. */
function boundaries(ctx: CheckContext): Boundary[] {
  const out: Boundary[] = [];
  const command = ctx.restartCmd;
  if (command !== undefined) out.push({ what: 'after --restart-cmd', cross: () => restartServer(ctx, command), url: ctx.url });
  for (const url of ctx.replicas) out.push({ what: `on ${url.href}`, cross: async () => undefined, url });
  return out;
}

/** Sets the state, checks it holds, crosses `boundary`, and checks it again. */
async function across(ctx: CheckContext, boundary: Boundary, watch: boolean): Promise<Outcome> {
  const session = await openSession(ctx);
  try {
    const evidence: string[] = [];
    const judged: string[] = [];
    const set = await request(ctx, session, 'logging/setLevel', { level: LEVEL });
    evidence.push(set.evidence);
    const logLevel = set.status === 200 && set.error === undefined && ctx.tool?.stream === 'post';
    if (logLevel) {
      const before = await logsOf(ctx, session);
      evidence.push(before.evidence);
      if (before.logs > 0)
        return notApplicable(`the server sends ordinary log messages although the level is ${LEVEL}: it does not honour logging/setLevel`, evidence);
    }
    if (watch) {
      await request(ctx, session, 'resources/subscribe', { uri: WATCHED });
      const before = await updateArrives(ctx, session);
      evidence.push(before.evidence);
      watch = before.arrived;
    }
    if (!logLevel && !watch)
      return notApplicable('nothing observable: no tool streams log messages on its call, and no resource update reaches a subscriber', evidence);
    await boundary.cross();
    const there = via(session, boundary.url);
    if (logLevel) {
      const after = await logsOf(ctx, there);
      evidence.push(after.evidence);
      if (after.status === 404)
        return pass(`${boundary.what}: the session was refused with 404 (the client re-initializes and sets its level again)`, evidence);
      if (after.logs > 0)
        return fail(
          `${boundary.what}: the log level ${LEVEL} set with logging/setLevel was lost: ${after.logs} ordinary log messages arrived on a session that answered ${after.status}`,
          evidence,
        );
      judged.push(`log level ${LEVEL} held`);
    }
    if (watch) {
      const after = await updateArrives(ctx, there);
      evidence.push(after.evidence);
      if (after.status === 404) return pass(`${boundary.what}: the session was refused with 404`, evidence);
      if (!after.arrived) return fail(`${boundary.what}: the subscription to ${WATCHED} was lost: its update no longer reaches the session`, evidence);
      judged.push(`subscription to ${WATCHED} held`);
    }
    return pass(`${boundary.what}: ${judged.join('; ')}`, evidence);
  } finally {
    await closeSession(ctx, session);
  }
}

export const semanticContinuity: Check = {
  id: 'semantic',
  title: 'Session state survives a restart and a replica switch',
  guards: 'a rebuilt session that answers 200 without the log level or subscriptions the client set: silently another session',
  session: true,
  severity: 'loss',
  async run(ctx) {
    const list = boundaries(ctx);
    if (list.length === 0) return notApplicable('no --restart-cmd or --replica given');
    if (!ctx.offers.logging && !ctx.offers.subscribe) return notApplicable('the server offers neither logging nor resource subscriptions');
    const watch = ctx.offers.subscribe && (await hasTool(ctx, UPDATE_TOOL));
    const outcomes: Outcome[] = [];
    for (const boundary of list) outcomes.push(await across(ctx, boundary, watch));
    const failed = outcomes.find((o) => o.verdict === 'FAIL');
    const shown = failed ?? outcomes.find((o) => o.verdict === 'pass') ?? outcomes[0];
    return { ...(shown as Outcome), detail: outcomes.map((o) => o.detail).join('; ') };
  },
};

/** Whether the server lists tool `name`. */
async function hasTool(ctx: CheckContext, name: string): Promise<boolean> {
  const session = await openSession(ctx);
  try {
    const listed = await exchange(
      { method: 'POST', url: ctx.url, headers: sessionHeaders(session), body: { jsonrpc: '2.0', id: session.nextId++, method: 'tools/list' } },
      ctx.timeoutMs,
    );
    const message = (listed.json ?? messages(listed.events).find((m) => 'result' in m)) as { result?: { tools?: { name?: string }[] } } | undefined;
    return (message?.result?.tools ?? []).some((t) => t.name === name);
  } finally {
    await closeSession(ctx, session);
  }
}
