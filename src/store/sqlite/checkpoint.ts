/**
 * WAL checkpoints off the event loop.
 *
 * A checkpoint copies the WAL's pages into the database file and fsyncs both files. Left
 * to SQLite's auto-checkpoint (every 1,000 pages) it runs inside whichever commit crosses
 * the threshold, on the event loop: the copy costs CPU there, and the fsyncs stall the
 * loop (every session) for as long as the disk takes. Here a worker thread with its own
 * connection runs `PASSIVE` checkpoints instead, which never block the writer, each time
 * the store has written about {@link CHECKPOINT_BYTES}. The worker starts on the first
 * checkpoint (a store that never writes that much never starts one).
 *
 * Starting the WAL over: SQLite rewinds the WAL only when a write begins with every frame
 * copied, which a steady stream of commits may never find between the worker's passes.
 * So once the WAL holds {@link RESTART_PAGES} and a pass has caught up, the worker holds
 * the store's commits off (they wait, queued, while the event loop runs on), copies the
 * last frames and makes that write itself: a no-op update of the lock row, whose commit
 * rewinds the WAL. The store's own auto-checkpoint stays on as a backstop at
 * {@link BACKSTOP_PAGES}; if the worker fails, it goes back to SQLite's default.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Bytes written (payloads plus an estimate of the pages around them) between checkpoints. */
export const CHECKPOINT_BYTES = 4 * 1024 * 1024;
/** WAL pages after which the worker, once caught up, starts the WAL over. */
export const RESTART_PAGES = 2_048;
/** The store connection's own auto-checkpoint while the worker runs, in pages. */
export const BACKSTOP_PAGES = 10_000;
/** SQLite's default auto-checkpoint, in pages: what the store falls back to without a worker. */
export const DEFAULT_PAGES = 1_000;

/** Slots of the state shared with the worker. */
const RUNNING = 0;
const HOLD = 1;

/** The worker: a CommonJS script, so it needs no file of its own next to this module. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { timeout: 1000, fileMustExist: true });
const state = workerData.state;
/** Copies the WAL into the database file; returns its length in frames, -1 if busy. */
function catchUp() {
  let log = -1;
  for (let i = 0; i < 4; i++) {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)');
    if (r.busy !== 0) return -1;
    log = r.log;
    if (r.log === r.checkpointed) break;
  }
  return log;
}
/** Waits out a commit of the store in flight; with HOLD set, none starts after it. */
const barrier = db.transaction(() => {});
/** A write that begins with every frame copied: its commit rewinds the WAL. */
const rewind = db.transaction(() => db.prepare('UPDATE process_lock SET heartbeat_at = heartbeat_at WHERE id = 1').run());
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    if (catchUp() >= workerData.restartPages) {
      Atomics.store(state, ${HOLD}, 1);
      try {
        barrier.immediate();
        if (catchUp() >= 0) rewind.immediate();
      } finally {
        Atomics.store(state, ${HOLD}, 0);
      }
    }
  } catch {
    // Busy or failing: the next request, or the store's backstop, checkpoints.
  }
  Atomics.store(state, ${RUNNING}, 0);
});
`;

export class Checkpointer {
  readonly #path: string;
  /** Called once if the worker fails: the store's connection must checkpoint by itself again. */
  readonly #onFailure: () => void;
  #worker: Worker | undefined;
  #failed = false;
  #closed = false;
  /**
   * {@link RUNNING} is 1 while the worker checkpoints; {@link HOLD} while it rewinds the
   * WAL. Shared memory rather than messages: the store reads them synchronously, and a
   * producer that keeps the event loop busy with microtasks must not hold up checkpoints.
   */
  readonly #state = new Int32Array(new SharedArrayBuffer(8));
  #written = 0;

  constructor(path: string, onFailure: () => void) {
    this.#path = path;
    this.#onFailure = onFailure;
  }

  /** True while the worker rewinds the WAL: commits should wait (they would block on it). */
  get holding(): boolean {
    return Atomics.load(this.#state, HOLD) !== 0;
  }

  /** The store committed about `bytes`: checkpoint once enough has accumulated. */
  wrote(bytes: number): void {
    this.#written += bytes;
    if (this.#written < CHECKPOINT_BYTES || this.#failed || this.#closed || Atomics.load(this.#state, RUNNING) !== 0) return;
    this.#written = 0;
    const worker = this.#worker ?? this.#start();
    if (!worker) return;
    Atomics.store(this.#state, RUNNING, 1);
    worker.postMessage('checkpoint');
  }

  /** Closes the worker's connection (before the store's); resolves once the worker is gone. */
  async close(): Promise<void> {
    this.#closed = true;
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = undefined;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.ref(); // until it is gone: an unref'd worker would let the process end under our await
    worker.postMessage('close');
    await exited;
  }

  #start(): Worker | undefined {
    try {
      const module = createRequire(import.meta.url).resolve('better-sqlite3');
      const worker = new Worker(WORKER, {
        eval: true,
        workerData: { module, path: this.#path, state: this.#state, restartPages: RESTART_PAGES },
      });
      worker.unref();
      worker.on('error', () => this.#fail());
      worker.on('exit', () => {
        if (!this.#closed) this.#fail();
      });
      this.#worker = worker;
      return worker;
    } catch {
      this.#fail();
      return undefined;
    }
  }

  #fail(): void {
    this.#worker = undefined;
    Atomics.store(this.#state, HOLD, 0); // a worker that died holding commits off must not keep them off

    if (this.#failed || this.#closed) return;
    this.#failed = true;
    this.#onFailure();
  }
}
