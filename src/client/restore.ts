/**
 * Reading the persisted checkpoint at start. A corrupt checkpoint is reported and
 * discarded (the client starts a new session); an unreadable stored initialize request or
 * result is reported and dropped (a lost session then cannot be re-initialized, or the SDK
 * `Client` skips initialize and sees no server capabilities, and says so).
 */
import { toError } from '../protocol/errors.js';
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import { STANDALONE_STREAM, isEpoch, streamStartId } from '../protocol/event-id.js';
import type { CheckpointStore, SessionCheckpoint } from './checkpoint.js';
import type { StreamCheckpoint } from './verdicts.js';

/** What a checkpoint restores beyond its positions. */
export interface Restored {
  checkpoint: SessionCheckpoint;
  init: JsonRpcRequest | undefined;
  /** The server's initialize result, when kept and well-formed. */
  initResult: Record<string, unknown> | undefined;
}

export async function readCheckpoint(store: CheckpointStore, report: (error: Error) => void): Promise<Restored | undefined> {
  let checkpoint: SessionCheckpoint | undefined;
  try {
    checkpoint = await store.load();
  } catch (error) {
    report(toError(error));
    await store.clear().catch(() => {});
  }
  if (!checkpoint) return undefined;
  const read = (text: string | undefined, what: string, valid: (v: Record<string, unknown>) => boolean): Record<string, unknown> | undefined => {
    if (text === undefined) return undefined;
    try {
      const value = JSON.parse(text) as Record<string, unknown> | null;
      if (typeof value === 'object' && value !== null && valid(value)) return value;
    } catch {
      // reported below
    }
    report(new Error(`Ignoring an unreadable ${what} in the checkpoint`));
    return undefined;
  };
  // The result must have what the SDK Client reads from it.
  const initResult = read(
    checkpoint.initializeResult,
    'initialize result',
    (v) => typeof v.protocolVersion === 'string' && typeof v.capabilities === 'object' && typeof v.serverInfo === 'object',
  );
  return { checkpoint, init: read(checkpoint.initialize, 'initialize request', () => true) as JsonRpcRequest | undefined, initResult };
}

/**
 * Where the restored standalone stream resumes: its saved position; or, when the process
 * that saved the checkpoint died before it saved one (its GET may still have been sent
 * events), the start of the stream on a server that proves continuity (it names an epoch),
 * so those events are replayed instead of skipped. A server without epochs gives no such
 * cursor: the stream opens afresh.
 */
export function restoredStandalone(checkpoint: SessionCheckpoint): StreamCheckpoint | undefined {
  if (checkpoint.standalone !== undefined) return checkpoint.streams[checkpoint.standalone];
  const { epoch } = checkpoint;
  if (epoch === null || !isEpoch(epoch)) return undefined;
  const lastId = streamStartId(epoch, STANDALONE_STREAM);
  return { stream: STANDALONE_STREAM, lastId, scheme: 'chained', seq: 0, chain: lastId.slice(lastId.lastIndexOf('.') + 1) };
}
