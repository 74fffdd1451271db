/**
 * Reading the persisted checkpoint at start. A checkpoint that cannot be used fails
 * `connect` with a `CheckpointError` carrying the calls in flight it still lists, and is
 * left where it is (only the application clears it): a corrupt one (`checkpoint-corrupt`,
 * including an unreadable stored initialize request or result), and one taken from another
 * server URL or principal (`checkpoint-mismatch`).
 */
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import { STANDALONE_STREAM, isEpoch, streamStartId } from '../protocol/event-id.js';
import { bindingMismatch, type CheckpointBinding } from './binding.js';
import { sessionCheckpointProblem, type CheckpointStore, type SessionCheckpoint } from './checkpoint.js';
import { CheckpointError } from './errors.js';
import { salvageUnfinished } from './unfinished.js';
import type { StreamCheckpoint } from './verdicts.js';

/** What a checkpoint restores beyond its positions. */
export interface Restored {
  checkpoint: SessionCheckpoint;
  init: JsonRpcRequest | undefined;
  /** The server's initialize result, when kept and well-formed. */
  initResult: Record<string, unknown> | undefined;
}

/** The checkpoint in `store`, if any, checked against what the transport is bound to. */
export async function readCheckpoint(store: CheckpointStore, binding: CheckpointBinding): Promise<Restored | undefined> {
  const checkpoint = await store.load();
  // null too: what a store built on `localStorage.getItem` naturally returns for none.
  if (checkpoint === undefined || checkpoint === null) return undefined;
  // A store of the application's own may return anything: checked like a file's content.
  const problem = sessionCheckpointProblem(checkpoint);
  if (problem !== undefined) {
    const unfinished = salvageUnfinished((checkpoint as Partial<SessionCheckpoint> | null)?.inFlight);
    throw new CheckpointError('checkpoint-corrupt', `The checkpoint is malformed (${problem})`, { part: problem }, { unfinished });
  }
  const unfinished = checkpoint.inFlight ?? [];
  const field = bindingMismatch(checkpoint, binding);
  if (field !== undefined) {
    const what = field === 'server' ? `server (${checkpoint.server ?? ''}, not ${binding.server})` : 'principal';
    throw new CheckpointError('checkpoint-mismatch', `The checkpoint was taken from another ${what}`, { field }, { unfinished });
  }
  const read = (text: string | undefined, part: string, valid: (v: Record<string, unknown>) => boolean): Record<string, unknown> | undefined => {
    if (text === undefined) return undefined;
    try {
      const value = JSON.parse(text) as Record<string, unknown> | null;
      if (typeof value === 'object' && value !== null && valid(value)) return value;
    } catch {
      // thrown below
    }
    throw new CheckpointError('checkpoint-corrupt', `The checkpoint's ${part} is unreadable`, { part }, { unfinished });
  };
  // The result must have what the SDK Client reads from it.
  const initResult = read(
    checkpoint.initializeResult,
    'initializeResult',
    (v) => typeof v.protocolVersion === 'string' && typeof v.capabilities === 'object' && typeof v.serverInfo === 'object',
  );
  const init = read(checkpoint.initialize, 'initialize', (v) => v.method === 'initialize') as JsonRpcRequest | undefined;
  return { checkpoint, init, initResult };
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
