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
  maxEvents?: number;
  /** Payload bytes kept per stream (default 16 MiB). */
  maxBytes?: number;
  /** Age after which events may be trimmed, ms (default: no age limit). */
  maxAgeMs?: number;
}

export const DEFAULT_RETENTION: Required<RetentionOptions> = {
  maxEvents: 10_000,
  maxBytes: 16 * 1024 * 1024,
  maxAgeMs: Number.POSITIVE_INFINITY,
};

/** The per-session, per-stream event log. */
export interface EventLog {
  /** Creates an empty stream. `seed` is the chain value before its first event. */
  openStream(session: string, stream: string, seed: string, info: StreamInfo): Promise<void>;
  /**
   * Appends events. `events[0].seq` must be `head.lastSeq + 1` and the rest contiguous,
   * else the store throws `store-conflict` and appends nothing.
   */
  append(session: string, stream: string, events: readonly LogEvent[]): Promise<void>;
  /** Up to `limit` events with `seq > afterSeq`, in order. */
  read(session: string, stream: string, afterSeq: number, limit: number): Promise<LogEvent[]>;
  head(session: string, stream: string): Promise<StreamHead | undefined>;
  /** Marks a stream complete: no more appends. */
  closeStream(session: string, stream: string): Promise<void>;
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
  /** Replaces an existing record; no-op when it is gone. */
  put(record: SessionRecord): Promise<void>;
  delete(id: string): Promise<void>;
  count(): Promise<number>;
  /** Ids of sessions idle since before `cutoff` (ms since epoch), at most `limit`. */
  idleSince(cutoff: number, limit: number): Promise<string[]>;
}

/** A store: sessions plus their logs. */
export interface Store {
  readonly name: string;
  readonly sessions: SessionStore;
  readonly log: EventLog;
  /** Does this store survive a process restart? (Decides whether sessions are rehydrated.) */
  readonly durable: boolean;
  close(): Promise<void>;
}
