/**
 * What the endpoints of one process share: the event loop (the producers' turn budget and
 * request admission) and memory (the bytes queued for readers, the request bodies being
 * received). Bounds are each endpoint's own; the counts they are checked against are kept
 * here, once per process.
 */
import { observeBufferedBytes } from '../../telemetry/meter.js';
import { Admission } from './admission.js';
import { BodyBudget } from './body-budget.js';
import { ReaderBudget } from './reader-budget.js';
import { Turns } from './turns.js';

/**
 * The state shared by everything that runs on one event loop. Use {@link defaultProcess}
 * unless you are isolating a test or a tenant: an instance of your own has its own counts,
 * so bounds checked against it no longer see the rest of the process.
 */
export class ProcessState {
  /** The producers' time budget per event-loop turn. */
  readonly turns = new Turns();
  /** Admission of incoming requests per event-loop turn. */
  readonly admission = new Admission();
  /** Bytes queued for all readers (SSE and WebSocket). */
  readonly readers = new ReaderBudget();
  /** Bytes of request bodies being received. */
  readonly bodies = new BodyBudget();
}

/**
 * The instance every endpoint, stream and sink uses unless given another. It is a module
 * singleton, so two copies of this package loaded in one process (two versions installed
 * side by side, or one bundled) each have their own: their endpoints then share neither
 * turns nor budgets, and each copy's bounds apply to its own endpoints only.
 */
export const defaultProcess = new ProcessState();
// The telemetry gauge reports the shared count: the one every endpoint adds to by default.
observeBufferedBytes(() => defaultProcess.readers.total);
