/**
 * What a stream needs from its session: the seam between the stream layer and whoever
 * holds the session, so streams and replay never import the session itself.
 */
import type { EventLog } from '../../store/types.js';
import type { ProcessState } from './process.js';

/** A stream that has written and closed its last event, as its host sees it. */
export interface CompletedStream {
  readonly name: string;
}

/** What a stream needs from its session. */
export interface StreamHost {
  readonly sessionId: string;
  readonly epoch: string;
  readonly log: EventLog;
  readonly replayPageSize: number;
  /** Fencing token of this process's ownership of the session (clusters), passed on every write. */
  readonly fence: number | undefined;
  now(): number;
  /** The process state its producers share (default: `defaultProcess`). */
  readonly process?: ProcessState | undefined;
  /** The stream has written and closed its last event. */
  onStreamComplete(stream: CompletedStream): void;
  /** The log refused a batch even after retries: the stream's history can no longer be proven. */
  onStoreFailure(error: unknown): void;
}
