/**
 * Did session B receive anything of session A's? Compared by meaning, not by bytes: a
 * message is the same whatever the order of its keys or its whitespace, and a message is
 * A's when it answers one of A's request IDs, carries one of A's progress tokens or A's
 * session ID, or repeats a distinctive value of A's payloads. Pure.
 */

/** What marks session A's messages. */
export interface SessionMarks {
  /** IDs of the requests A sent. */
  requestIds: ReadonlyArray<string | number>;
  /** Progress tokens A sent. */
  progressTokens: ReadonlyArray<string | number>;
  /** A's `Mcp-Session-Id`. */
  sessionId?: string | undefined;
}

/** JSON with object keys sorted at every level: equal for equal meanings. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** Strings this long or longer count as distinctive payload (shorter ones, like "info", recur by chance). */
const DISTINCTIVE = 12;

function strings(value: unknown, out: Set<string>): Set<string> {
  if (typeof value === 'string') {
    if (value.length >= DISTINCTIVE) out.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) strings(v, out);
  } else if (value !== null && typeof value === 'object') {
    for (const v of Object.values(value)) strings(v, out);
  }
  return out;
}

/** Why one of B's messages is A's, or undefined. */
function whyLeaked(message: Record<string, unknown>, marks: SessionMarks, identities: Set<string>, payload: Set<string>): string | undefined {
  if (identities.has(canonical(message))) return "a message identical to one of A's";
  const id = message['id'];
  if ((typeof id === 'string' || typeof id === 'number') && ('result' in message || 'error' in message) && marks.requestIds.includes(id))
    return `the response to A's request ${JSON.stringify(id)}`;
  const params = message['params'] as Record<string, unknown> | undefined;
  const token = params?.['progressToken'];
  if ((typeof token === 'string' || typeof token === 'number') && marks.progressTokens.includes(token))
    return `progress for A's token ${JSON.stringify(token)}`;
  const text = canonical(message);
  if (marks.sessionId !== undefined && marks.sessionId.length >= 8 && text.includes(marks.sessionId)) return "A's session ID";
  for (const s of strings(message, new Set())) if (payload.has(s)) return `A's payload ${JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s)}`;
  return undefined;
}

/** Each of `received` (B's messages) that is A's, with the reason. */
export function findLeaks(aMessages: readonly Record<string, unknown>[], received: readonly Record<string, unknown>[], marks: SessionMarks): string[] {
  const identities = new Set(aMessages.map(canonical));
  const payload = new Set<string>();
  for (const m of aMessages) {
    // The payload a request or notification carries, not JSON-RPC boilerplate.
    strings(m['params'], payload);
    strings(m['result'], payload);
    strings(m['error'], payload);
  }
  const out: string[] = [];
  for (const m of received) {
    const why = whyLeaked(m, marks, identities, payload);
    if (why !== undefined) out.push(why);
  }
  return out;
}
