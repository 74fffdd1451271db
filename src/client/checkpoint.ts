/**
 * The client's checkpoint: what it must remember across a disconnect, and across its own
 * restart, to prove (or refuse) continuity on the next resume: the last fully processed
 * event ID and its digest, persisted out of band (docs/design.md §3).
 *
 * Stores are pluggable (`CheckpointStore`); the one in memory is here, the one in a file
 * (which needs `node:fs`) in file-checkpoint.ts, its own entry point so that a browser
 * bundle of the client has no `node:` imports.
 */
import { VISIBLE_ASCII } from '../protocol/headers.js';
import { streamCheckpointProblem } from './stream-checkpoint.js';
import type { StreamCheckpoint } from './verdicts.js';
import { unfinishedProblem, type UnfinishedRequest } from './unfinished.js';
import { isRecord, isText } from './shape.js';

/** One session's checkpoint. */
export interface SessionCheckpoint {
  sessionId: string;
  /** Protocol version negotiated at initialize (sent back as `MCP-Protocol-Version`). */
  protocolVersion: string;
  /** `X-MCP-Replay-Epoch` last seen, or null if the server sends none. */
  epoch: string | null;
  /** Per-stream positions, keyed by stream name (`streams[k].stream === k`). */
  streams: Record<string, StreamCheckpoint>;
  /** When it was saved (ms since the epoch). */
  updatedAt: number;
  /**
   * The initialize request (JSON) that opened the session, so a restarted client can
   * re-initialize with the same client info and capabilities if the session is gone.
   */
  initialize?: string | undefined;
  /** Key in `streams` of the standalone GET stream, the one a restarted client resumes. */
  standalone?: string | undefined;
  /**
   * The server's answer to initialize (JSON: capabilities, serverInfo, instructions,
   * protocol version), so that a restarted SDK `Client` sees them without a new initialize.
   */
  initializeResult?: string | undefined;
  /** Requests sent and not yet answered when it was saved; a restored transport lists them. */
  inFlight?: UnfinishedRequest[] | undefined;
  /**
   * The server it was taken from: the endpoint URL's origin and path. A transport for
   * another URL refuses it (`checkpoint-mismatch`). Absent in checkpoints of earlier versions.
   */
  server?: string | undefined;
  /**
   * A digest of the transport's `principal` option, when it has one (never the principal
   * itself): a transport acting for another principal refuses it (`checkpoint-mismatch`).
   */
  principal?: string | undefined;
}

/** Where a client keeps its checkpoint. */
export interface CheckpointStore {
  /** The saved checkpoint, or undefined if there is none. Rejects with `checkpoint-corrupt` if one exists but is unusable. */
  load(): Promise<SessionCheckpoint | undefined>;
  /** Replaces the checkpoint (bounded to `maxStreams`). Rejects with `TypeError` for a malformed one. */
  save(checkpoint: SessionCheckpoint): Promise<void>;
  /** Forgets it (after a divergence, a re-initialization or a DELETE). */
  clear(): Promise<void>;
}

/** Options of the stores. */
export interface CheckpointStoreOptions {
  /** Streams kept per checkpoint (default {@link DEFAULT_MAX_STREAMS}); see {@link boundStreams}. */
  maxStreams?: number | undefined;
}

/** Streams kept per checkpoint by default: enough for a standalone stream and many concurrent requests. */
export const DEFAULT_MAX_STREAMS = 64;

const MAX_TEXT = 1024;
/** An initialize request (or its result) carries info, capabilities, instructions: small, but not tiny. */
export const MAX_INITIALIZE = 64 * 1024;
/** Longest server URL (origin and path) a checkpoint records. */
const MAX_SERVER = 8 * 1024;

/** The optional text fields, in the order they are checked, and their longest length. */
const OPTIONAL_TEXT = [
  ['initialize', MAX_INITIALIZE],
  ['standalone', MAX_TEXT],
  ['initializeResult', MAX_INITIALIZE],
  ['server', MAX_SERVER],
  ['principal', MAX_TEXT],
] as const;

/** What is wrong with `value` as a {@link SessionCheckpoint}, or undefined if nothing. */
export function sessionCheckpointProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object';
  const v = value;
  if (!isText(v.sessionId, MAX_TEXT) || !VISIBLE_ASCII.test(v.sessionId)) return 'sessionId';
  if (!isText(v.protocolVersion, MAX_TEXT)) return 'protocolVersion';
  if (v.epoch !== null && !isText(v.epoch, MAX_TEXT)) return 'epoch';
  if (!Number.isFinite(v.updatedAt)) return 'updatedAt';
  for (const [field, max] of OPTIONAL_TEXT) {
    if (v[field] !== undefined && !isText(v[field], max)) return field;
  }
  if (v.inFlight !== undefined) {
    const problem = unfinishedProblem(v.inFlight);
    if (problem !== undefined) return problem;
  }
  const streams = v.streams;
  if (!isRecord(streams)) return 'streams';
  for (const [key, stream] of Object.entries(streams)) {
    const problem = streamCheckpointProblem(stream);
    if (problem !== undefined) return `streams[${JSON.stringify(key.slice(0, 32))}].${problem}`;
    if ((stream as StreamCheckpoint).stream !== key) return `streams[${JSON.stringify(key.slice(0, 32))}].stream`;
  }
  return undefined;
}

/** Is `value` a well-formed {@link SessionCheckpoint}? */
export function isSessionCheckpoint(value: unknown): value is SessionCheckpoint {
  return sessionCheckpointProblem(value) === undefined;
}

/**
 * `checkpoint` with at most `maxStreams` streams (a copy; the input is not changed).
 * Complete streams go first (nothing will resume them), then the least recently updated
 * (`updatedAt`, absent counts as oldest); ties keep the earlier entries.
 */
export function boundStreams(checkpoint: SessionCheckpoint, maxStreams: number = DEFAULT_MAX_STREAMS): SessionCheckpoint {
  const entries = Object.entries(checkpoint.streams);
  if (entries.length <= maxStreams) return { ...checkpoint, streams: { ...checkpoint.streams } };
  const order = entries
    .map(([key, s], index) => ({ key, index, complete: s.complete === true, at: s.updatedAt ?? Number.NEGATIVE_INFINITY }))
    .sort((a, b) => Number(b.complete) - Number(a.complete) || a.at - b.at || a.index - b.index);
  const drop = new Set(order.slice(0, entries.length - maxStreams).map((e) => e.key));
  // fromEntries defines own properties: a stream named "__proto__" stays data.
  return { ...checkpoint, streams: Object.fromEntries(entries.filter(([key]) => !drop.has(key))) };
}

/** `maxStreams` validated, or the default. */
export function checkMaxStreams(value: number | undefined): number {
  const max = value ?? DEFAULT_MAX_STREAMS;
  if (!Number.isSafeInteger(max) || max < 0) throw new TypeError(`maxStreams must be a non-negative integer, got ${max}`);
  return max;
}

/** Validates, bounds and deep-copies what a caller asks to save. */
export function prepare(checkpoint: SessionCheckpoint, maxStreams: number): SessionCheckpoint {
  const problem = sessionCheckpointProblem(checkpoint);
  if (problem !== undefined) throw new TypeError(`Invalid checkpoint: ${problem}`);
  return structuredClone(boundStreams(checkpoint, maxStreams));
}

/** A checkpoint kept in memory: survives reconnects, not a process restart. */
export function memoryCheckpoint(options: CheckpointStoreOptions = {}): CheckpointStore {
  const maxStreams = checkMaxStreams(options.maxStreams);
  let current: SessionCheckpoint | undefined;
  return {
    load() {
      // Copies both ways: a caller mutating its object must not change what is stored.
      return Promise.resolve(current === undefined ? undefined : structuredClone(current));
    },
    save(checkpoint) {
      try {
        current = prepare(checkpoint, maxStreams);
        return Promise.resolve();
      } catch (error) {
        return Promise.reject(error);
      }
    },
    clear() {
      current = undefined;
      return Promise.resolve();
    },
  };
}
