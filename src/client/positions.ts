/**
 * The client's record of where each stream stands, and its throttled persistence to the
 * checkpoint store: often enough that a restarted client loses little, never per event.
 *
 * A live stream is not copied per event: its slot points at the stream, marked as moved,
 * and its position is read from the stream when saved.
 */
import { MAX_INITIALIZE, type CheckpointStore, type SessionCheckpoint } from './checkpoint.js';
import type { UnfinishedRequest } from './unfinished.js';
import type { StreamCheckpoint } from './verdicts.js';

/** Positions kept in memory; the checkpoint store bounds what it writes on its own. */
const MAX_POSITIONS = 256;

/** A request stream's name in our server's chained IDs: a base-36 number. */
const REQUEST_STREAM = /^[0-9a-z]{1,10}$/;

/** Key of the standalone stream for ID schemes that do not name streams. */
const STANDALONE_KEY = 'standalone';

/** What the positions need to know about the session when they are saved. */
export interface SessionSnapshot {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  epoch: string | null;
  initialize: string | undefined;
  /** The server's initialize result (JSON). */
  initializeResult?: string | undefined;
  standalone: StreamCheckpoint | undefined;
  /** Requests sent and not yet answered. */
  inFlight?: UnfinishedRequest[] | undefined;
  /** What the checkpoint belongs to (./binding.ts). */
  server?: string | undefined;
  principal?: string | undefined;
}

/** A stream whose position moves: read when saved. */
export interface PositionSource {
  checkpoint(): StreamCheckpoint | undefined;
}

/**
 * Where one stream stands: a fixed position (restored, or recorded when the stream ended),
 * or the live stream it is read from. Nothing is built per event; the checkpoint object is
 * built only when saved (at most every checkpoint interval).
 */
interface Slot {
  position: StreamCheckpoint;
  /** The live stream this slot follows, if any: its position supersedes `position`. */
  source: PositionSource | undefined;
  /** Still in the map (a trimmed or cleared slot is not; its stream binds a new one). */
  kept: boolean;
  /** The source moved since the last save: `updatedAt` is stamped then. */
  moved: boolean;
  updatedAt: number;
  complete: boolean;
}

export class StreamPositions {
  readonly #positions = new Map<string, Slot>();
  /** The slot each live stream is bound to (a stream's key never changes once it has a position). */
  #bound = new WeakMap<object, Slot>();
  readonly #localNames = new WeakMap<object, string>();
  readonly #standalones = new WeakSet<object>();
  /** Key under which the current standalone stream's position is kept. */
  #standaloneKey: string | undefined;
  readonly #store: CheckpointStore;
  readonly #snapshot: () => SessionSnapshot;
  readonly #report: (error: Error) => void;
  #counter = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** A scheduled save is running; `#again` if more moved meanwhile (the delay to use then). */
  #saving = false;
  #again: number | undefined;
  #stopped = false;
  readonly #sendsSeen: boolean;

  /** `seen`: {@link seen} reports what this client holds (else it says nothing). */
  constructor(store: CheckpointStore, snapshot: () => SessionSnapshot, report: (error: Error) => void, seen = true) {
    this.#sendsSeen = seen;
    this.#store = store;
    this.#snapshot = snapshot;
    this.#report = report;
  }

  /** Positions loaded from a checkpoint. */
  restore(checkpoint: SessionCheckpoint): void {
    for (const [key, position] of Object.entries(checkpoint.streams)) {
      this.#keep(key, { position, source: undefined, kept: true, moved: false, updatedAt: position.updatedAt ?? 0, complete: position.complete === true });
    }
  }

  /** Names `stream` as the standalone stream (for schemes without stream names). */
  markStandalone(stream: object): void {
    this.#localNames.set(stream, STANDALONE_KEY);
    this.#standalones.add(stream);
  }

  /**
   * `stream`'s position moved (called per event): a flag on its slot. The first call binds
   * the stream to the slot of its key, taking it over from whatever stood there.
   */
  advanced(stream: PositionSource): void {
    const slot = this.#bound.get(stream);
    if (slot !== undefined && slot.source === stream && slot.kept) {
      slot.moved = true;
      return;
    }
    const position = stream.checkpoint();
    if (position === undefined) return;
    const bound = this.#slot(stream, position, false);
    bound.source = stream;
    bound.moved = true;
    this.#bound.set(stream, bound);
  }

  /** Records a stream's position as fixed (`complete` when it ended normally). */
  record(stream: object, position: StreamCheckpoint, complete = false): void {
    const slot = this.#slot(stream, position, complete);
    slot.source = undefined;
    slot.moved = false;
    slot.updatedAt = Date.now();
  }

  /** The slot of `stream`'s key, holding `position` now. */
  #slot(stream: object, position: StreamCheckpoint, complete: boolean): Slot {
    const key = position.scheme === 'chained' ? position.stream : this.#localName(stream);
    if (this.#standalones.has(stream)) this.#standaloneKey = key;
    const slot = this.#positions.get(key);
    if (slot) {
      slot.position = position;
      slot.complete = complete;
      return slot;
    }
    const added: Slot = { position, source: undefined, kept: true, moved: false, updatedAt: Date.now(), complete };
    this.#keep(key, added);
    if (this.#positions.size > MAX_POSITIONS) this.#trim();
    return added;
  }

  #keep(key: string, slot: Slot): void {
    const replaced = this.#positions.get(key);
    if (replaced) replaced.kept = false;
    this.#positions.set(key, slot);
  }

  #forget(key: string, slot: Slot): void {
    slot.kept = false;
    this.#positions.delete(key);
  }

  /** Every request adds a stream: forget completed ones first, then the oldest. */
  #trim(): void {
    for (const [key, p] of this.#positions) {
      if (this.#positions.size <= MAX_POSITIONS) return;
      if (p.complete) this.#forget(key, p);
    }
    for (const [key, p] of this.#positions) {
      if (this.#positions.size <= MAX_POSITIONS) return;
      if (key !== this.#standaloneKey) this.#forget(key, p);
    }
  }

  /**
   * What this client holds, for the server to check its store against (`x-mcp-seen`): the
   * last event IDs of its newest request stream and of its standalone stream, or undefined
   * before it received any. A store that lost those events went back in time.
   */
  seen(): string | undefined {
    if (!this.#sendsSeen) return undefined;
    let newest: { n: number; id: string } | undefined;
    let standalone: string | undefined;
    for (const [key, slot] of this.#positions) {
      const p = slot.source?.checkpoint() ?? slot.position;
      if (p.scheme !== 'chained' || !(p.seq !== undefined && p.seq > 0)) continue;
      if (key === this.#standaloneKey) standalone = p.lastId;
      else if (REQUEST_STREAM.test(key)) {
        const n = parseInt(key, 36);
        if (newest === undefined || n > newest.n) newest = { n, id: p.lastId };
      }
    }
    const ids = [newest?.id, standalone].filter((id) => id !== undefined);
    return ids.length > 0 ? ids.join(', ') : undefined;
  }

  clear(): void {
    for (const slot of this.#positions.values()) slot.kept = false;
    this.#positions.clear();
    this.#bound = new WeakMap();
  }

  /**
   * Saves within `delayMs`, coalescing requests made meanwhile. One scheduled save runs at
   * a time: a store slower than the interval (a file on a busy disk) gets the latest
   * positions once it is free, not a queue of stale ones.
   */
  schedule(delayMs: number): void {
    if (this.#stopped) return;
    if (this.#saving) {
      this.#again = delayMs;
      return;
    }
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#saving = true;
      void this.save()
        .catch((error: unknown) => this.#report(error as Error))
        .finally(() => {
          this.#saving = false;
          const again = this.#again;
          this.#again = undefined;
          if (again !== undefined) this.schedule(again);
        });
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
    // A result too large to keep (huge instructions) is left out: the restored SDK Client then
    // skips initialize and sees no capabilities, as before results were kept, but saves go on.
    if (s.initializeResult !== undefined && s.initializeResult.length <= MAX_INITIALIZE) checkpoint.initializeResult = s.initializeResult;
    if (s.inFlight !== undefined && s.inFlight.length > 0) checkpoint.inFlight = s.inFlight;
    if (s.server !== undefined) checkpoint.server = s.server;
    if (s.principal !== undefined) checkpoint.principal = s.principal;
    if (s.standalone) checkpoint.standalone = s.standalone.scheme === 'chained' ? s.standalone.stream : STANDALONE_KEY;
    await this.#store.save(checkpoint);
  }

  /**
   * The checkpoint's view: each position under its key, read from its stream if live, with
   * when it was last recorded or seen moving (at a save: as fresh as the saves are frequent).
   */
  #streams(): Record<string, StreamCheckpoint> {
    const out: Record<string, StreamCheckpoint> = {};
    const now = Date.now();
    for (const [key, slot] of this.#positions) {
      if (slot.source !== undefined) slot.position = slot.source.checkpoint() ?? slot.position;
      if (slot.moved) {
        slot.moved = false;
        slot.updatedAt = now;
      }
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
