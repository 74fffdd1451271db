/**
 * WAL checkpoints off the event loop.
 *
 * A checkpoint copies the WAL's pages into the database file and fsyncs both files. Left
 * to SQLite's auto-checkpoint it runs inside whichever commit crosses the threshold, on
 * the event loop: the copy costs CPU there, and the two fsyncs stall the loop (every
 * session) for as long as the disk takes. Here a worker thread with its own connection
 * runs `PASSIVE` checkpoints instead, which never block the writer, each time the store
 * has written about {@link CHECKPOINT_BYTES}. The worker starts on the first checkpoint
 * (a store that never writes that much never starts one).
 *
 * The store's connection keeps an auto-checkpoint of {@link BACKSTOP_PAGES}: SQLite starts
 * the WAL over only when a write finds every frame copied, which under a steady stream of
 * commits may not happen between the worker's passes; the backstop then checkpoints the
 * few frames left, on the loop, and the WAL starts over. If the worker fails, the store's
 * connection goes back to SQLite's default auto-checkpoint.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** Bytes written (payloads plus an estimate of the pages around them) between checkpoints. */
export const CHECKPOINT_BYTES = 4 * 1024 * 1024;
/** The store connection's own auto-checkpoint while the worker runs, in pages. */
export const BACKSTOP_PAGES = 10_000;
/** SQLite's default auto-checkpoint, in pages: what the store falls back to without a worker. */
export const DEFAULT_PAGES = 1_000;

/** The worker: a CommonJS script, so it needs no file of its own next to this module. */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { timeout: workerData.timeout, fileMustExist: true });
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    // Again while the writer added frames meanwhile (each pass is shorter): the writer
    // starts the WAL over only once it finds every frame copied.
    for (let i = 0; i < 4; i++) {
      const [r] = db.pragma('wal_checkpoint(PASSIVE)');
      if (r.busy !== 0 || r.log === r.checkpointed) break;
    }
  } catch {
    // Busy or failing: the next request, or the store's backstop, checkpoints.
  }
  Atomics.store(workerData.running, 0, 0);
});
`;

export class Checkpointer {
  readonly #path: string;
  readonly #busyTimeoutMs: number;
  /** Called once if the worker fails: the store's connection must checkpoint by itself again. */
  readonly #onFailure: () => void;
  #worker: Worker | undefined;
  #failed = false;
  #closed = false;
  /**
   * 1 while the worker checkpoints. Shared memory rather than a reply message: a producer
   * that keeps the event loop busy with microtasks must not hold up the checkpoints.
   */
  readonly #running = new Int32Array(new SharedArrayBuffer(4));
  #written = 0;

  constructor(path: string, busyTimeoutMs: number, onFailure: () => void) {
    this.#path = path;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#onFailure = onFailure;
  }

  /** The store committed about `bytes`: checkpoint once enough has accumulated. */
  wrote(bytes: number): void {
    this.#written += bytes;
    if (this.#written < CHECKPOINT_BYTES || this.#failed || this.#closed || Atomics.load(this.#running, 0) !== 0) return;
    this.#written = 0;
    const worker = this.#worker ?? this.#start();
    if (!worker) return;
    Atomics.store(this.#running, 0, 1);
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
        workerData: { module, path: this.#path, timeout: this.#busyTimeoutMs, running: this.#running },
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
    if (this.#failed || this.#closed) return;
    this.#failed = true;
    this.#onFailure();
  }
}
