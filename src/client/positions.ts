/**
 * The client's record of where each stream stands, and its throttled persistence to the
 * checkpoint store: often enough that a restarted client loses little, never per event.
 */
import type { CheckpointStore, SessionCheckpoint } from './checkpoint.js';
import type { StreamCheckpoint } from './verdicts.js';

/** Positions kept in memory; the checkpoint store bounds what it writes on its own. */
const MAX_POSITIONS = 256;

/** Key of the standalone stream for ID schemes that do not name streams. */
const STANDALONE_KEY = 'standalone';

/** What the positions need to know about the session when they are saved. */
export interface SessionSnapshot {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  epoch: string | null;
  initialize: string | undefined;
  standalone: StreamCheckpoint | undefined;
}

/**
 * Where one stream stands. Recorded per event, so it is updated in place; the checkpoint
 * object is built only when saved (at most every checkpoint interval), not per event.
 */
interface Slot {
  position: StreamCheckpoint;
  updatedAt: number;
  complete: boolean;
}

export class StreamPositions {
  readonly #positions = new Map<string, Slot>();
  readonly #localNames = new WeakMap<object, string>();
  readonly #standalones = new WeakSet<object>();
  /** Key under which the current standalone stream's position is kept. */
  #standaloneKey: string | undefined;
  readonly #store: CheckpointStore;
  readonly #snapshot: () => SessionSnapshot;
  readonly #report: (error: Error) => void;
  #counter = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;

  constructor(store: CheckpointStore, snapshot: () => SessionSnapshot, report: (error: Error) => void) {
    this.#store = store;
    this.#snapshot = snapshot;
    this.#report = report;
  }

  /** Positions loaded from a checkpoint. */
  restore(checkpoint: SessionCheckpoint): void {
    for (const [key, position] of Object.entries(checkpoint.streams)) {
      this.#positions.set(key, { position, updatedAt: position.updatedAt ?? 0, complete: position.complete === true });
    }
  }

  /** Names `stream` as the standalone stream (for schemes without stream names). */
  markStandalone(stream: object): void {
    this.#localNames.set(stream, STANDALONE_KEY);
    this.#standalones.add(stream);
  }

  /** Records a stream's position (`complete` when it ended normally). */
  record(stream: object, position: StreamCheckpoint, complete = false): void {
    const key = position.scheme === 'chained' ? position.stream : this.#localName(stream);
    if (this.#standalones.has(stream)) this.#standaloneKey = key;
    const slot = this.#positions.get(key);
    if (slot) {
      slot.position = position;
      slot.updatedAt = Date.now();
      slot.complete = complete;
      return;
    }
    this.#positions.set(key, { position, updatedAt: Date.now(), complete });
    if (this.#positions.size > MAX_POSITIONS) this.#trim();
  }

  /** Every request adds a stream: forget completed ones first, then the oldest. */
  #trim(): void {
    for (const [key, p] of this.#positions) {
      if (this.#positions.size <= MAX_POSITIONS) return;
      if (p.complete) this.#positions.delete(key);
    }
    for (const key of this.#positions.keys()) {
      if (this.#positions.size <= MAX_POSITIONS) return;
      if (key !== this.#standaloneKey) this.#positions.delete(key);
    }
  }

  clear(): void {
    this.#positions.clear();
  }

  /** Saves within `delayMs`, coalescing requests made meanwhile. */
  schedule(delayMs: number): void {
    if (this.#timer || this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.save().catch((error: unknown) => this.#report(error as Error));
    }, delayMs);
    this.#timer.unref?.();
  }

  /** Saves now, and no more after this (the transport closed). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.save();
  }

  async save(): Promise<void> {
    const s = this.#snapshot();
    if (s.sessionId === undefined || s.protocolVersion === undefined) return;
    const checkpoint: SessionCheckpoint = {
      sessionId: s.sessionId,
      protocolVersion: s.protocolVersion,
      epoch: s.epoch,
      streams: this.#streams(),
      updatedAt: Date.now(),
    };
    if (s.initialize !== undefined) checkpoint.initialize = s.initialize;
    if (s.standalone) checkpoint.standalone = s.standalone.scheme === 'chained' ? s.standalone.stream : STANDALONE_KEY;
    await this.#store.save(checkpoint);
  }

  /** The checkpoint's view: each position under its key, with when it was recorded. */
  #streams(): Record<string, StreamCheckpoint> {
    const out: Record<string, StreamCheckpoint> = {};
    for (const [key, slot] of this.#positions) {
      const p: StreamCheckpoint = { ...slot.position, stream: key, updatedAt: slot.updatedAt };
      if (slot.complete) p.complete = true;
      else delete p.complete;
      out[key] = p;
    }
    return out;
  }

  #localName(stream: object): string {
    let name = this.#localNames.get(stream);
    if (name === undefined) this.#localNames.set(stream, (name = `request-${++this.#counter}`));
    return name;
  }
}
