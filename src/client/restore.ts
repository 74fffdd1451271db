/**
 * Reading the persisted checkpoint at start. A corrupt checkpoint is reported and
 * discarded (the client starts a new session); an unreadable stored initialize is
 * reported and dropped (a lost session then cannot be re-initialized, and says so).
 */
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import type { CheckpointStore, SessionCheckpoint } from './checkpoint.js';

export async function readCheckpoint(
  store: CheckpointStore,
  report: (error: Error) => void,
): Promise<{ checkpoint: SessionCheckpoint; init: JsonRpcRequest | undefined } | undefined> {
  let checkpoint: SessionCheckpoint | undefined;
  try {
    checkpoint = await store.load();
  } catch (error) {
    report(error instanceof Error ? error : new Error(String(error)));
    await store.clear().catch(() => {});
  }
  if (!checkpoint) return undefined;
  let init: JsonRpcRequest | undefined;
  if (checkpoint.initialize) {
    try {
      init = JSON.parse(checkpoint.initialize) as JsonRpcRequest;
    } catch {
      report(new Error('Ignoring an unreadable initialize request in the checkpoint'));
    }
  }
  return { checkpoint, init };
}
