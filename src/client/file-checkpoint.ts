/**
 * `mcp-continuity/client/file-checkpoint`: the client's checkpoint in a file, written
 * atomically. The one client module with `node:` imports (an adapter), so it is an entry
 * point of its own, and `mcp-continuity/client` re-exports it only outside browsers.
 */
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { randomToken } from '../protocol/crypto.js';
import { CheckpointError } from './errors.js';
import type { UnfinishedRequest } from './unfinished.js';
import { checkMaxStreams, prepare, type CheckpointStore, type CheckpointStoreOptions, type SessionCheckpoint } from './checkpoint.js';
import { decodeEnvelope, encodeEnvelope, isEnvelopeProblem, macKey, maxContainers, type MacKey } from './checkpoint-envelope.js';

/** Options of {@link fileCheckpoint}. */
export interface FileCheckpointOptions extends CheckpointStoreOptions {
  /**
   * A larger file is reported corrupt rather than read (default
   * {@link DEFAULT_MAX_CHECKPOINT_BYTES}, at most {@link MAX_CHECKPOINT_BYTES}).
   */
  maxBytes?: number | undefined;
  /**
   * A secret of the application (a string or bytes, at least 16 bytes): every save carries an
   * HMAC-SHA-256 of the checkpoint under it, and a load refuses a file without a valid one
   * (`checkpoint-corrupt`, part `mac`), so an edited checkpoint is never believed. Without a
   * key the file is trusted as far as the file system it sits on is.
   */
  key?: string | Uint8Array | undefined;
}

/** Largest checkpoint file read by default; a bounded checkpoint is a few tens of KiB at most. */
export const DEFAULT_MAX_CHECKPOINT_BYTES = 1024 * 1024;
/** Largest `maxBytes` accepted: above any valid checkpoint, and what a load reads at most. */
export const MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024;

/**
 * A checkpoint in a file. Writes are atomic: a temporary file in the same directory is
 * written, fsynced and renamed over the target (then the directory is fsynced), so a
 * reader or a crash sees the old checkpoint or the new one, never a mix. Operations of
 * one store run one at a time, so the last `save` called is the one that stays.
 *
 * `load` returns undefined when the file does not exist, and rejects with a
 * `CheckpointError` (`checkpoint-corrupt`) when it exists but is not a valid checkpoint
 * (unparseable, malformed, larger than `maxBytes`, holding more values than a valid one can,
 * or failing its MAC): corruption is reported, never mistaken for "no session yet", and the
 * error carries the calls in flight that could still be read. The file is left as it is:
 * only `clear` removes it. It is created with mode 0600: it holds a session ID.
 *
 * The transport does not write it per event: it saves at most every `checkpointIntervalMs`
 * while events flow (one save at a time), and on close. Each save is durable (fsynced)
 * before the next begins.
 */
export function fileCheckpoint(path: string, options: FileCheckpointOptions = {}): CheckpointStore {
  const maxStreams = checkMaxStreams(options.maxStreams);
  const maxBytes = checkMaxBytes(options.maxBytes);
  const key = options.key === undefined ? undefined : macKey(options.key);
  key?.catch(() => undefined); // a failed import is reported by the load or save that awaits it
  let queue: Promise<unknown> = Promise.resolve();

  function serial<T>(op: () => Promise<T>): Promise<T> {
    const result = queue.then(op, op);
    queue = result.catch(() => undefined);
    return result;
  }

  return {
    load: () => serial(() => readCheckpoint(path, maxBytes, key, maxContainers(maxStreams))),
    save(checkpoint) {
      let prepared: SessionCheckpoint;
      try {
        prepared = prepare(checkpoint, maxStreams);
      } catch (error) {
        return Promise.reject(error);
      }
      return serial(async () => writeAtomically(path, await encodeEnvelope(prepared, key)));
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

/** `maxBytes` validated, or the default. */
function checkMaxBytes(value: number | undefined): number {
  const max = value ?? DEFAULT_MAX_CHECKPOINT_BYTES;
  if (!Number.isSafeInteger(max) || max < 1 || max > MAX_CHECKPOINT_BYTES) {
    throw new TypeError(`maxBytes must be an integer from 1 to ${MAX_CHECKPOINT_BYTES}, got ${max}`);
  }
  return max;
}

async function readCheckpoint(path: string, maxBytes: number, key: MacKey | undefined, containers: number): Promise<SessionCheckpoint | undefined> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      // Check the size first: a huge file is refused without being read into memory.
      const { size } = await handle.stat();
      if (size > maxBytes) throw corrupt(path, 'too-large');
      text = await readAtMost(handle, size, () => corrupt(path, 'too-large'));
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  const decoded = await decodeEnvelope(text, key, containers);
  if (isEnvelopeProblem(decoded)) throw corrupt(path, decoded.part, decoded.cause, decoded.unfinished);
  return decoded;
}

/** The file's text, read into a buffer of its size: a file that grew since its size was taken is refused, not read on. */
async function readAtMost(handle: FileHandle, size: number, tooLarge: () => Error): Promise<string> {
  const buffer = new Uint8Array(size + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
    if (bytesRead === 0) break;
    length += bytesRead;
    if (length > size) throw tooLarge();
  }
  return new TextDecoder().decode(buffer.subarray(0, length));
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

function corrupt(path: string, part: string, cause?: unknown, unfinished: UnfinishedRequest[] = []): CheckpointError {
  return new CheckpointError('checkpoint-corrupt', `Checkpoint ${path} is unusable (${part})`, { path, part }, { cause, unfinished });
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : undefined;
}
