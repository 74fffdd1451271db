/**
 * `mcp-continuity/client/file-checkpoint`: the client's checkpoint in a file, written
 * atomically. The one client module with `node:` imports (an adapter), so it is an entry
 * point of its own, and `mcp-continuity/client` re-exports it only outside browsers.
 */
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomToken } from '../protocol/crypto.js';
import { CheckpointError } from './errors.js';
import { checkMaxStreams, prepare, sessionCheckpointProblem, type CheckpointStore, type CheckpointStoreOptions, type SessionCheckpoint } from './checkpoint.js';

/** Options of {@link fileCheckpoint}. */
export interface FileCheckpointOptions extends CheckpointStoreOptions {
  /** A larger file is reported corrupt rather than read (default {@link DEFAULT_MAX_CHECKPOINT_BYTES}). */
  maxBytes?: number | undefined;
}

/** Largest checkpoint file read by default; a bounded checkpoint is a few tens of KiB at most. */
export const DEFAULT_MAX_CHECKPOINT_BYTES = 1024 * 1024;

const FORMAT = 'mcp-continuity/checkpoint';
const VERSION = 1;

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
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : undefined;
}
