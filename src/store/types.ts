/**
 * Storage interfaces. The server core computes sequence numbers and chain values (it owns
 * each stream while the session lives on this process); a store persists them, refuses
 * non-contiguous appends, applies retention and answers indexed range reads, so a replay
 * reads what it sends and never the whole log.
 */

/** What the server keeps about a session. */
export interface SessionRecord {
  readonly id: string;
  /** Generation of this session's event log; changes only if the log was lost or reset. */
  epoch: string;
  /** Earlier epochs of this session (newest last, bounded), to tell "epoch changed" from "foreign cursor". */
  pastEpochs: string[];
  /** Protocol version negotiated at initialize. */
  protocolVersion: string;
  /** The initialize request as received (JSON), replayed into a fresh server on rehydration. */
  initialize: string;
  /** Principal the session is bound to, if the endpoint binds sessions to one. */
  principal?: string | undefined;
  readonly createdAt: number;
  lastActiveAt: number;
  /**
   * What the session holds beyond its log (opaque to stores, JSON written by the server):
   * the client requests whose effect lasts for the session (logging level, resource
   * subscriptions), replayed into a rebuilt server, and the application's own saved state.
   * Written with the record, so under the same fencing token. Absent until first set.
   */
  state?: string | undefined;
}

/** Kind and owner of a stream, recorded when it is opened. */
export interface StreamInfo {
  /** `standalone` is the session's GET stream; `request` answers one POST. */
  kind: 'standalone' | 'request';
  /** JSON-RPC ids of the requests this stream answers (JSON text of each id). */
  requestIds: string[];
}

/** The state of one stream's log. */
export interface StreamHead extends StreamInfo {
  /** Lowest sequence number still retained; `lastSeq + 1` when everything was trimmed. */
  firstSeq: number;
  /** Chain value of event `firstSeq - 1` (the seed when nothing was trimmed). */
  baseChain: string;
  /** Highest sequence number appended; 0 before the first append. */
  lastSeq: number;
  /** Chain value of event `lastSeq` (the seed before the first append). */
  lastChain: string;
  /** No more events will be appended (the request completed or the stream was abandoned). */
  closed: boolean;
}

/** One stored event. */
export interface LogEvent {
  readonly seq: number;
  readonly chain: string;
  /** The SSE data: a JSON-RPC message, or '' for a priming event. */
  readonly payload: string;
  /**
   * UTF-8 byte length of `payload`, when the producer already counted it (count once,
   * carry it); stores compute it when absent.
   */
  readonly bytes?: number | undefined;
  /** Milliseconds since the epoch when it was appended. */
  readonly at: number;
}

/** Per-stream retention. A trimmed cursor is refused with `replay-window-exceeded`. */
export interface RetentionOptions {
  /** Events kept per stream (default 10,000). */
  maxEvents?: number | undefined;
  /** Payload bytes kept per stream (default 16 MiB). */
  maxBytes?: number | undefined;
  /** Age after which events may be trimmed, ms (default: no age limit). */
  maxAgeMs?: number | undefined;
}

/** Retention with every default filled in. */
export type ResolvedRetention = { readonly [K in keyof RetentionOptions]-?: NonNullable<RetentionOptions[K]> };

export const DEFAULT_RETENTION: ResolvedRetention = {
  maxEvents: 10_000,
  maxBytes: 16 * 1024 * 1024,
  maxAgeMs: Number.POSITIVE_INFINITY,
};

/** The per-session, per-stream event log. */
export interface EventLog {
  /**
   * Creates an empty stream. `seed` is the chain value before its first event.
   * With `fence`, refused with `store-fenced` unless it is the session's current fencing token.
   */
  openStream(session: string, stream: string, seed: string, info: StreamInfo, fence?: number): Promise<void>;
  /**
   * Appends events. `events[0].seq` must be `head.lastSeq + 1` and the rest contiguous,
   * else the store throws `store-conflict` and appends nothing.
   *
   * With `fence`, the store first checks that it is the session's current fencing token
   * ({@link Lease.token}) and otherwise throws `store-fenced` and appends nothing; the check
   * and the write are one atomic step, so an owner that lost its lease (paused, partitioned)
   * can never write after another replica took the session over.
   *
   * When the store has a {@link Store.bus}, a successful append publishes an
   * {@link AppendNotice} itself, atomically with the write: callers never publish appends.
   */
  append(session: string, stream: string, events: readonly LogEvent[], fence?: number): Promise<void>;
  /** Up to `limit` events with `seq > afterSeq`, in order. */
  read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]>;
  head(session: string, stream: string): Promise<StreamHead | undefined>;
  /**
   * Marks a stream complete: no more appends. With `fence`, refused with `store-fenced`
   * unless it is the session's current fencing token. Publishes a notice with `closed: true`
   * on the store's bus.
   */
  closeStream(session: string, stream: string, fence?: number): Promise<void>;
  /** Names of the session's streams, in the order they were opened. */
  streams(session: string): Promise<string[]>;
  dropStream(session: string, stream: string): Promise<void>;
  dropSession(session: string): Promise<void>;
}

/** Session records. */
export interface SessionStore {
  /** Inserts a new record; throws if the id exists (session IDs are never reused). */
  create(record: SessionRecord): Promise<void>;
  get(id: string): Promise<SessionRecord | undefined>;
  /**
   * Replaces an existing record; no-op when it is gone. With `fence`, refused with
   * `store-fenced` (and nothing written) unless it is the session's current fencing token.
   */
  put(record: SessionRecord, fence?: number): Promise<void>;
  delete(id: string): Promise<void>;
  count(): Promise<number>;
  /** Ids of sessions idle since before `cutoff` (ms since epoch), at most `limit`. */
  idleSince(cutoff: number, limit: number): Promise<string[]>;
}

/**
 * A replica's claim on a session. `token` is the fencing token: it rises every time the
 * session passes to a different owner, and never goes back (it survives expiry and release).
 */
export interface Lease {
  /** The replica holding (or that last held) the session. */
  readonly owner: string;
  /** Fencing token of this owner's tenure; 1 for the first owner of a session. */
  readonly token: number;
  /** Milliseconds since the epoch, by the store's clock (Redis: the server's `TIME`). */
  readonly expiresAt: number;
}

/**
 * Which replica owns each session, under a lease with a fencing token.
 *
 * Protocol: a replica `acquire`s a session before it runs it, `renew`s well before
 * `expiresAt`, passes `token` as the `fence` of every write (appends, stream open/close,
 * session record updates), and `release`s it when it lets go. A lease that lapses is free
 * for the next `acquire`; if that is another owner, the token rises, and from then on every
 * write carrying the old token is refused with `store-fenced`. The token belongs to the
 * session's data: when the session's data is lost (Redis restarted without persistence),
 * the lease is gone too, so `renew` returns false and fenced writes are refused.
 */
export interface Ownership {
  /**
   * Takes the session if it has no live lease, or if `owner` already holds it (then it
   * extends it). The token rises when the owner changes (it stays when the same owner takes
   * back a lease that lapsed with nobody else taking it). Returns the lease that holds
   * afterwards: ours, or the other owner's live lease (compare `owner`).
   */
  acquire(session: string, owner: string, leaseMs: number): Promise<Lease>;
  /**
   * Extends our lease to `leaseMs` from now if `owner` and `token` are still current (also
   * after it lapsed, if nobody took it); false when fenced off (another owner took over, or
   * the session's data is gone).
   */
  renew(session: string, owner: string, token: number, leaseMs: number): Promise<boolean>;
  /** Lets the session go at once if `owner`/`token` still hold it; the token is kept. No-op otherwise. */
  release(session: string, owner: string, token: number): Promise<void>;
  /** The live lease (not expired, not released), or `undefined` when the session is free. */
  current(session: string): Promise<Lease | undefined>;
}

/** A stream grew or closed. Published by the store itself on each append and close. */
export interface AppendNotice {
  readonly session: string;
  readonly stream: string;
  /** The stream's `lastSeq` after the append. */
  readonly lastSeq: number;
  /** The stream was closed (no more appends will come). */
  readonly closed: boolean; /**
   * The bus reconnected and notices published meanwhile may be lost: re-read every stream
   * of the session you tail. (`stream` is '' and `lastSeq` -1 in such a notice.)
   */
  readonly resync?: boolean | undefined;
}

/** Stops a subscription; resolves once it is gone. Calling it again is a no-op. */
export type Unsubscribe = () => Promise<void>;

/**
 * Push notifications between the replicas (processes) sharing a store, so any replica can
 * tail a stream without polling and carry a message to the replica that owns a session.
 *
 * Delivery is at most once and only to subscribers present when the message is published
 * (pub/sub): a tailer subscribes first (awaiting the subscription), then reads the log from
 * its cursor, then reads again on each notice; a notice is a hint to read, the log is the
 * truth. Listeners are called synchronously in publish order per channel; a throwing
 * listener does not stop the others.
 */
export interface ClusterBus {
  /**
   * Announces that `stream` of `session` reached `lastSeq`. The store's own appends and
   * closes publish automatically (atomically with the write); this is for anything else.
   */
  publishAppend(session: string, stream: string, lastSeq: number): Promise<void>;
  /** Notices of every stream of `session`; resolves once subscribed. */
  subscribeAppends(session: string, listener: (notice: AppendNotice) => void): Promise<Unsubscribe>;
  /**
   * Sends `message` to the inbox of replica `owner`; resolves to the number of receivers,
   * counted per store connection (per process), not per listener: 0 means nobody listens.
   */
  sendToOwner(owner: string, message: string): Promise<number>;
  /** Receives the messages sent to `owner`; resolves once subscribed. */
  subscribeInbox(owner: string, listener: (message: string) => void): Promise<Unsubscribe>;
  /**
   * Calls `listener` each time this process's subscriptions are back after a lost store
   * connection: a message sent to it meanwhile (a reply to a carried call, say) may be lost.
   * Absent on a bus that never disconnects (in-process).
   */
  onReconnect?(listener: () => void): void;
}

/** A store: sessions plus their logs. */
export interface Store {
  readonly name: string;
  readonly sessions: SessionStore;
  readonly log: EventLog;
  /** Session leases and fencing tokens. */
  readonly ownership: Ownership;
  /**
   * Notifications between the users of this store. Present on every store shipped here:
   * in-process for memory and SQLite (several endpoints sharing one store object), through
   * Redis for the Redis store.
   */
  readonly bus?: ClusterBus | undefined;
  /**
   * Can several processes use this store at once? (Only then do sessions need placement,
   * forwarding and failover between processes.) True for Redis; false for memory and SQLite,
   * which are single-process.
   */
  readonly shared?: boolean | undefined;
  /** Does this store survive a process restart? (Decides whether sessions are rehydrated.) */
  readonly durable: boolean;
  /**
   * The replicas' ownership lease as the store was configured with it (the Redis store's
   * `?leaseMs=`), which the running replicas agreed on: the endpoint's default `cluster.leaseMs`.
   */
  readonly leaseMs?: number | undefined;
  close(): Promise<void>;
}
