/** The Redis store's event log: one Redis Stream per stream (ID `0-<seq>`), plus a head hash. */
import type { Keys } from './keys.js';
import type { Link } from './link.js';
import { APPEND, CLOSE, DROP_SESSION, DROP_STREAM, OPEN } from './scripts.js';
import type { WriteFloors } from './floors.js';
import type { EventLog, LogEvent, ResolvedRetention, StreamHead, StreamInfo } from '../types.js';

/** What the log needs besides the link. */
export interface LogContext {
  readonly link: Link;
  readonly keys: Keys;
  readonly retention: ResolvedRetention;
  readonly now: () => number;
  /** Expiry of a session's keys, ms; 0 for none. */
  readonly ttlMs: number;
  /** Acknowledged writes per owned session, to notice a store that went back in time. */
  readonly floors: WriteFloors;
  /** Waits until enough Redis replicas hold the writes made so far on the session's node (the durability option). */
  readonly replicate: ((session: string) => Promise<void>) | undefined;
}

/** A retention limit as Lua reads it (`tonumber` of "Infinity" is not portable). */
function limitArg(n: number): string {
  return Number.isFinite(n) ? String(Math.floor(n)) : '1e308';
}

export class RedisEventLog implements EventLog {
  readonly #c: LogContext;

  constructor(context: LogContext) {
    this.#c = context;
  }

  async openStream(session: string, stream: string, seed: string, info: StreamInfo, fence?: number): Promise<void> {
    const { link, keys, ttlMs, floors } = this.#c;
    await link.script(
      OPEN,
      [keys.head(session, stream), keys.events(session, stream), keys.lease(session), keys.streams(session)],
      [floors.fenceArg(session, fence), keys.tag(session), stream, seed, info.kind, JSON.stringify(info.requestIds), String(ttlMs)],
    );
    floors.acked(session, fence);
  }

  async append(session: string, stream: string, events: readonly LogEvent[], fence?: number): Promise<void> {
    const { link, keys, retention, now, ttlMs, floors, replicate } = this.#c;
    const args: string[] = [
      floors.fenceArg(session, fence),
      keys.tag(session),
      stream,
      limitArg(retention.maxEvents),
      limitArg(retention.maxBytes),
      Number.isFinite(retention.maxAgeMs) ? String(now() - retention.maxAgeMs) : '',
      String(ttlMs),
      replicate ? '0' : '1',
    ];
    for (const e of events) args.push(String(e.seq), e.chain, String(e.at), e.payload);
    const last = await link.script(APPEND, [keys.head(session, stream), keys.events(session, stream), keys.lease(session)], args);
    if (!replicate || events.length === 0) {
      floors.acked(session, fence);
      return;
    }
    // The append resolves, and tails hear of it, only once the replicas hold it: no reader
    // is woken for an event a failover could still take back. Only then does it count as
    // acknowledged: a promoted replica without it has lost nothing a client saw.
    await replicate(session);
    floors.acked(session, fence);
    const tail = keys.tail(session);
    await link.command(tail, ['SPUBLISH', tail, `${String(last)} 0 ${stream}`]);
  }

  async read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]> {
    if (!(limit > 0)) return [];
    const from = Math.max(0, Math.floor(afterSeq));
    const args = ['XRANGE', this.#c.keys.events(session, stream), `(0-${from}`, '+'];
    if (limit < Number.MAX_SAFE_INTEGER) args.push('COUNT', String(Math.floor(limit)));
    const entries = (await this.#c.link.command(args[1] as string, args)) as Array<[string, string[]]>;
    return entries.map(toEvent);
  }

  async head(session: string, stream: string): Promise<StreamHead | undefined> {
    const key = this.#c.keys.head(session, stream);
    const h = await this.#c.link.command(key, ['HGETALL', key]);
    return toHead(h);
  }

  async closeStream(session: string, stream: string, fence?: number): Promise<void> {
    const { link, keys, ttlMs, floors } = this.#c;
    await link.script(CLOSE, [keys.head(session, stream), keys.lease(session)], [floors.fenceArg(session, fence), keys.tag(session), stream, String(ttlMs)]);
    floors.acked(session, fence);
  }

  async streams(session: string): Promise<string[]> {
    const key = this.#c.keys.streams(session);
    return (await this.#c.link.command(key, ['LRANGE', key, '0', '-1'])) as string[];
  }

  async dropStream(session: string, stream: string): Promise<void> {
    const { link, keys } = this.#c;
    await link.script(DROP_STREAM, [keys.head(session, stream), keys.events(session, stream), keys.streams(session)], [stream]);
  }

  async dropSession(session: string): Promise<void> {
    const { link, keys } = this.#c;
    await link.script(DROP_SESSION, [keys.streams(session)], [keys.tag(session)]);
  }
}

/** An XRANGE entry: `[id, [c, chain, a, at, k, cum, p, payload]]`. */
function toEvent(entry: [string, string[]]): LogEvent {
  const [id, f] = entry;
  return { seq: Number(id.slice(2)), chain: f[1] as string, payload: f[7] as string, at: Number(f[3]) };
}

/** HGETALL as RESP2 (flat array) or RESP3 (map object). */
function toHead(reply: unknown): StreamHead | undefined {
  let h: Record<string, string>;
  if (Array.isArray(reply)) {
    if (reply.length === 0) return undefined;
    h = {};
    for (let i = 0; i + 1 < reply.length; i += 2) h[String(reply[i])] = String(reply[i + 1]);
  } else if (reply && typeof reply === 'object') {
    h = reply as Record<string, string>;
    if (Object.keys(h).length === 0) return undefined;
  } else return undefined;
  if (h.last === undefined) return undefined;
  return {
    kind: h.kind === 'standalone' ? 'standalone' : 'request',
    requestIds: JSON.parse(h.rids ?? '[]') as string[],
    firstSeq: Number(h.first),
    baseChain: h.base ?? '',
    lastSeq: Number(h.last),
    lastChain: h.lastc ?? '',
    closed: h.closed === '1',
  };
}
