/**
 * The client's checkpoint: what it must remember across a disconnect, and across its own
 * restart, to prove (or refuse) continuity on the next resume: the last fully processed
 * event ID and its digest, persisted out of band (docs/design.md §3).
 *
 * Stores are pluggable (`CheckpointStore`); two ship here: in memory, and a file written
 * atomically. This is the one client module allowed `node:` imports (an adapter).
 */
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomToken } from '../protocol/crypto.js';
import { CheckpointError } from './errors.js';
import { streamCheckpointProblem } from './stream-checkpoint.js';
import type { StreamCheckpoint } from './verdicts.js';

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

/** Options of {@link fileCheckpoint}. */
export interface FileCheckpointOptions extends CheckpointStoreOptions {
  /** A larger file is reported corrupt rather than read (default {@link DEFAULT_MAX_CHECKPOINT_BYTES}). */
  maxBytes?: number | undefined;
}

/** Streams kept per checkpoint by default: enough for a standalone stream and many concurrent requests. */
export const DEFAULT_MAX_STREAMS = 64;
/** Largest checkpoint file read by default; a bounded checkpoint is a few tens of KiB at most. */
export const DEFAULT_MAX_CHECKPOINT_BYTES = 1024 * 1024;

const FORMAT = 'mcp-continuity/checkpoint';
const VERSION = 1;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
const MAX_TEXT = 1024;
/** An initialize request carries client info and capabilities: small, but not tiny. */
const MAX_INITIALIZE = 64 * 1024;

/** What is wrong with `value` as a {@link SessionCheckpoint}, or undefined if nothing. */
export function sessionCheckpointProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not an object';
  const v = value as Record<string, unknown>;
  if (typeof v.sessionId !== 'string' || v.sessionId.length > MAX_TEXT || !VISIBLE_ASCII.test(v.sessionId)) return 'sessionId';
  if (typeof v.protocolVersion !== 'string' || v.protocolVersion.length > MAX_TEXT) return 'protocolVersion';
  if (v.epoch !== null && (typeof v.epoch !== 'string' || v.epoch.length > MAX_TEXT)) return 'epoch';
  if (typeof v.updatedAt !== 'number' || !Number.isFinite(v.updatedAt)) return 'updatedAt';
  if (v.initialize !== undefined && (typeof v.initialize !== 'string' || v.initialize.length > MAX_INITIALIZE)) return 'initialize';
  if (v.standalone !== undefined && (typeof v.standalone !== 'string' || v.standalone.length > MAX_TEXT)) return 'standalone';
  const streams = v.streams;
  if (typeof streams !== 'object' || streams === null || Array.isArray(streams)) return 'streams';
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

function checkMaxStreams(value: number | undefined): number {
  const max = value ?? DEFAULT_MAX_STREAMS;
  if (!Number.isSafeInteger(max) || max < 0) throw new TypeError(`maxStreams must be a non-negative integer, got ${max}`);
  return max;
}

/** Validates, bounds and deep-copies what a caller asks to save. */
function prepare(checkpoint: SessionCheckpoint, maxStreams: number): SessionCheckpoint {
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

/**
 * A checkpoint in a file. Writes are atomic: a temporary file in the same directory is
 * written, fsynced and renamed over the target (then the directory is fsynced), so a
 * reader or a crash sees the old checkpoint or the new one, never a mix. Operations of
 * one store run one at a time, so the last `save` called is the one that stays.
 *
 * `load` returns undefined when the file does not exist, and rejects with a
 * `CheckpointError` (`checkpoint-corrupt`) when it exists but is not a valid checkpoint:
 * corruption is reported, never mistaken for "no session yet". The caller clears it and
 * initializes afresh. The file is created with mode 0600: it holds a session ID.
 *
 * The transport does not write it per event: it saves at most every `checkpointIntervalMs`
 * while events flow (one save at a time), and on close. Each save is durable (fsynced)
 * before the next begins.
 */
export function fileCheckpoint(path: string, options: FileCheckpointOptions = {}): CheckpointStore {
  const maxStreams = checkMaxStreams(options.maxStreams);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES;
  let queue: Promise<unknown> = Promise.resolve();

  function serial<T>(op: () => Promise<T>): Promise<T> {
    const result = queue.then(op, op);
    queue = result.catch(() => undefined);
    return result;
  }

  return {
    load: () => serial(() => readCheckpoint(path, maxBytes)),
    save(checkpoint) {
      let prepared: SessionCheckpoint;
      try {
        prepared = prepare(checkpoint, maxStreams);
      } catch (error) {
        return Promise.reject(error);
      }
      const text = `${JSON.stringify({ format: FORMAT, version: VERSION, checkpoint: prepared })}\n`;
      return serial(() => writeAtomically(path, text));
    },
    clear: () =>
      serial(async () => {
        try {
          await unlink(path);
        } catch (error) {
          if (errorCode(error) !== 'ENOENT') throw error;
          return;
        }
        await syncDirectory(dirname(path));
      }),
  };
}

async function readCheckpoint(path: string, maxBytes: number): Promise<SessionCheckpoint | undefined> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      // Check the size first: a huge file is refused without being read into memory.
      const { size } = await handle.stat();
      if (size > maxBytes) throw corrupt(path, 'too-large');
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw corrupt(path, 'json', error);
  }
  if (typeof parsed !== 'object' || parsed === null) throw corrupt(path, 'envelope');
  const envelope = parsed as Record<string, unknown>;
  if (envelope.format !== FORMAT) throw corrupt(path, 'format');
  if (envelope.version !== VERSION) throw corrupt(path, 'version');
  const problem = sessionCheckpointProblem(envelope.checkpoint);
  if (problem !== undefined) throw corrupt(path, problem);
  return envelope.checkpoint as SessionCheckpoint;
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const dir = dirname(path);
  // Same directory: rename is atomic only within one file system.
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomToken(6)}.tmp`);
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text, 'utf8');
      // Without this a crash after the rename can leave a renamed but empty file.
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dir);
}

/** Makes a rename or unlink durable. Some platforms cannot fsync a directory; that is not an error there. */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    const code = errorCode(error);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EACCES') throw error;
  } finally {
    await handle?.close();
  }
}

function corrupt(path: string, part: string, cause?: unknown): CheckpointError {
  return new CheckpointError('checkpoint-corrupt', `Checkpoint ${path} is unusable (${part})`, { path, part }, { cause });
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : undefined;
}
