/**
 * MCP sessions as the probe drives them: initialize, find a tool that streams, call it.
 */
import { Header } from '../../protocol/headers.js';
import { exchange, messageOf, type Exchange, type SseEvent } from './wire.js';
import { ContinuityError } from '../../protocol/errors.js';

export const LATEST_VERSION = '2025-11-25';

/** How to make the server stream: a tool and the arguments for `n` events `intervalMs` apart. */
export interface ToolPlan {
  name: string;
  args: (n: number, intervalMs: number) => Record<string, unknown>;
  /** Where its events travel: on the call's own POST stream, or the session's GET stream. */
  stream: 'post' | 'get';
  /** Whether `intervalMs: 0` sends a burst within one millisecond (no timer between events). */
  burst: boolean;
}

/** Tools known to stream by themselves. */
const KNOWN_TOOLS: ToolPlan[] = [
  { name: 'emit', args: (count, intervalMs) => ({ count, intervalMs }), stream: 'post', burst: true },
  { name: 'trigger-long-running-operation', args: (steps, intervalMs) => ({ steps, duration: (steps * intervalMs) / 1000 }), stream: 'post', burst: false },
  { name: 'start-notification-stream', args: (count, interval) => ({ count, interval }), stream: 'get', burst: false },
];

/** A plan for `--tool NAME --args JSON`: its events are assumed to travel on the call's stream. */
export function customTool(name: string, args: Record<string, unknown>): ToolPlan {
  return { name, args: () => args, stream: 'post', burst: false };
}

/** Where the probe points, and how patient it is. */
export interface Target {
  url: URL;
  timeoutMs: number;
  /** Sent with every request (say, `authorization`). */
  headers?: Record<string, string> | undefined;
}

/** An initialized session. */
export interface ProbeSession {
  url: URL;
  id: string | undefined;
  protocolVersion: string;
  epoch: string | null;
  serverName: string | undefined;
  /** The capabilities the server declared on initialize. */
  capabilities: { logging?: unknown; resources?: { subscribe?: boolean } };
  init: Exchange;
  nextId: number;
  /** The target's extra headers, sent with every request of the session. */
  headers: Record<string, string>;
}

/** Initializes a session (and sends `notifications/initialized`). Throws if initialize fails. */
export async function openSession(target: Target, version = LATEST_VERSION, url = target.url): Promise<ProbeSession> {
  const init = await exchange(
    {
      method: 'POST',
      url,
      headers: target.headers ?? {},
      body: {
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'mcp-continuity-probe', version: '1.0.0' } },
      },
    },
    target.timeoutMs,
  );
  const message = init.json ?? init.events.map(messageOf).find((m) => m !== undefined && ('result' in m || 'error' in m));
  const result = (message as { result?: { protocolVersion?: string; serverInfo?: { name?: string }; capabilities?: ProbeSession['capabilities'] } } | undefined)
    ?.result;
  if (init.status !== 200 || !result) throw new ContinuityError('response-invalid', `initialize failed with ${whyNoResult(init, message)}`);
  const session: ProbeSession = {
    url,
    id: init.headers.get(Header.SessionId) ?? undefined,
    protocolVersion: result.protocolVersion ?? version,
    epoch: init.headers.get(Header.ReplayEpoch),
    serverName: result.serverInfo?.name,
    capabilities: result.capabilities ?? {},
    init,
    nextId: 1,
    headers: target.headers ?? {},
  };
  await exchange({ method: 'POST', url, headers: sessionHeaders(session), body: { jsonrpc: '2.0', method: 'notifications/initialized' } }, target.timeoutMs);
  return session;
}

/** What an initialize answer lacked, in words: the status, the media type, or the message. */
function whyNoResult(init: Exchange, message: unknown): string {
  const type = init.headers.get('content-type') ?? 'no Content-Type';
  if (init.status !== 200) {
    const body = init.json === undefined ? '' : `: ${JSON.stringify(init.json).slice(0, 160)}`;
    return `HTTP ${init.status} (${type})${body}`;
  }
  if (init.ended === 'not-sse' && init.json === undefined) {
    return `HTTP 200 but ${type}, neither JSON nor an SSE stream: is this the MCP endpoint (a Streamable HTTP URL, usually ending in /mcp)?`;
  }
  if (message !== undefined && typeof message === 'object' && message !== null && 'error' in message) {
    return `an error from the server: ${JSON.stringify(message.error).slice(0, 160)}`;
  }
  if (init.json !== undefined) return `HTTP 200, but JSON that is not an initialize result: ${JSON.stringify(init.json).slice(0, 160)}`;
  const events = init.events.length;
  return `HTTP 200 SSE, but no initialize result in ${events} event${events === 1 ? '' : 's'} (stream ${init.ended === 'idle' ? 'went silent' : 'ended'})${events > 0 ? `; first data: ${JSON.stringify(init.events[0]?.data.slice(0, 120))}` : ''}`;
}

/** The headers every request of `session` carries. */
export function sessionHeaders(session: ProbeSession, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { ...session.headers, [Header.ProtocolVersion]: session.protocolVersion, ...extra };
  if (session.id !== undefined) h[Header.SessionId] = session.id;
  return h;
}

/** Closes a session (DELETE), ignoring the outcome: cleanup only. */
export async function closeSession(target: Target, session: ProbeSession): Promise<void> {
  if (session.id === undefined) return;
  await exchange({ method: 'DELETE', url: session.url, headers: sessionHeaders(session) }, target.timeoutMs).catch(() => undefined);
}

/** Finds a tool that streams by itself, or undefined. */
export async function discoverTool(target: Target, session: ProbeSession): Promise<ToolPlan | undefined> {
  const listed = await exchange(
    { method: 'POST', url: session.url, headers: sessionHeaders(session), body: { jsonrpc: '2.0', id: session.nextId++, method: 'tools/list' } },
    target.timeoutMs,
  );
  const message = (listed.json ?? listed.events.map(messageOf).find((m) => m !== undefined && 'result' in m)) as
    { result?: { tools?: { name?: string }[] } } | undefined;
  const names = new Set((message?.result?.tools ?? []).map((t) => t.name));
  return KNOWN_TOOLS.find((t) => names.has(t.name));
}

/** Calls `plan`'s tool for `n` events, with a progress token; optionally cut the POST stream. */
export async function callTool(
  target: Target,
  session: ProbeSession,
  plan: ToolPlan,
  n: number,
  intervalMs: number,
  cutWhen?: (events: SseEvent[]) => boolean,
): Promise<{ id: number; exchange: Exchange }> {
  const id = session.nextId++;
  const body = {
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: plan.name, arguments: plan.args(n, intervalMs), _meta: { progressToken: `probe-${id}` } },
  };
  const spec = { method: 'POST' as const, url: session.url, headers: sessionHeaders(session), body, idleMs: Math.max(3000, intervalMs * 20) };
  const result = await exchange(cutWhen ? { ...spec, cutWhen } : spec, target.timeoutMs + n * intervalMs);
  return { id, exchange: result };
}

/** The messages of `events` that carry something (priming events and comments dropped). */
export function messages(events: readonly SseEvent[]): Record<string, unknown>[] {
  return events.map(messageOf).filter((m): m is Record<string, unknown> => m !== undefined);
}

/** The final response to request `id` among `events`, if it arrived. */
export function responseTo(events: readonly SseEvent[], id: number): Record<string, unknown> | undefined {
  return messages(events).find((m) => m['id'] === id && ('result' in m || 'error' in m));
}

/** Events with an ID and a message (what a resume can name and replay). */
export function payloadEvents(events: readonly SseEvent[]): SseEvent[] {
  return events.filter((e) => e.id !== undefined && e.id !== '' && messageOf(e) !== undefined);
}
