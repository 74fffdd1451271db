/**
 * Where a session lives: held in this process, or at rest in a durable store (then it is
 * rebuilt here on its first request, through the same path a restart uses). One decision,
 * one home: the endpoint routes requests, sessions run them, this module places them.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { SessionRecord, Store } from '../store/types.js';
import type { EndpointOptions, ResolvedLimits } from './options.js';
import { Session, type SessionDeps } from './session.js';

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** Could `id` name a session at all? (Anything else is unknown without asking the store.) */
export function plausibleSessionId(id: string): boolean {
  return id.length <= 256 && VISIBLE_ASCII.test(id);
}

export interface PlacementOptions {
  readonly store: Store;
  readonly limits: ResolvedLimits;
  readonly server: EndpointOptions['server'];
  now(): number;
  onError(error: Error): void;
}

/** The sessions of one endpoint, and where each one is. */
export class Placement {
  readonly #options: PlacementOptions;
  readonly #sessions = new Map<string, Session>();
  /** Rehydrations under way, so concurrent requests for one session share one. */
  readonly #rehydrating = new Map<string, Promise<Session | undefined>>();
  readonly #sweep: ReturnType<typeof setInterval>;
  /** Shared by every session of this endpoint; `onEnd` is wired to this placement. */
  readonly deps: SessionDeps;

  constructor(options: PlacementOptions, deps: Omit<SessionDeps, 'onEnd'>) {
    this.#options = options;
    this.deps = {
      ...deps,
      onEnd: (session) => {
        if (this.#sessions.get(session.sessionId) === session) this.#sessions.delete(session.sessionId);
      },
    };
    const { limits } = options;
    this.#sweep = setInterval(() => this.#expire(), Math.min(limits.sessionIdleMs / 2, 60_000));
    this.#sweep.unref?.();
  }

  /** Sessions held in this process. */
  get size(): number {
    return this.#sessions.size;
  }

  sessions(): IterableIterator<Session> {
    return this.#sessions.values();
  }

  /** The session `id`, from this process or rebuilt from the store; undefined if unknown. */
  async find(id: string): Promise<Session | undefined> {
    return this.#sessions.get(id) ?? (await this.#rehydrate(id));
  }

  /** Places a session just initialized here: the record is stored first, then the session is held. */
  async create(record: SessionRecord): Promise<Session> {
    this.#admit();
    await this.#options.store.sessions.create(record);
    const session = new Session(record, this.deps);
    this.#sessions.set(record.id, session);
    return session;
  }

  /** Leaves every session: durable ones stay in the store for the next process, others end. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const { store, onError } = this.#options;
    await Promise.all([...this.#sessions.values()].map((s) => (store.durable ? s.shutdown() : s.terminate()).catch(onError)));
    this.#sessions.clear();
  }

  #admit(): void {
    if (this.#sessions.size >= this.#options.limits.maxSessions) throw new ContinuityError('session-limit');
  }

  /** A session this process does not hold, rebuilt from a durable store; undefined if unknown. */
  #rehydrate(id: string): Promise<Session | undefined> {
    if (!this.#options.store.durable || !plausibleSessionId(id)) return Promise.resolve(undefined);
    let pending = this.#rehydrating.get(id);
    if (!pending) {
      pending = this.#rebuild(id).finally(() => this.#rehydrating.delete(id));
      this.#rehydrating.set(id, pending);
    }
    return pending;
  }

  async #rebuild(id: string): Promise<Session | undefined> {
    const { store, onError } = this.#options;
    const record = await store.sessions.get(id);
    if (!record) return undefined;
    this.#admit();
    const session = new Session(record, this.deps);
    try {
      await session.rehydrate(await this.#options.server({ sessionId: id, rehydrating: true }));
    } catch (error) {
      if (error instanceof ContinuityError && error.code === 'session-superseded') await session.terminate().catch(onError);
      else await session.shutdown().catch(onError);
      throw error;
    }
    this.#sessions.set(id, session);
    return session;
  }

  #expire(): void {
    const { store, limits, now, onError } = this.#options;
    const cutoff = now() - limits.sessionIdleMs;
    for (const s of this.#sessions.values()) {
      if (!s.hasReader && s.record.lastActiveAt < cutoff) void s.terminate().catch(onError);
    }
    // Sessions a durable store kept from earlier processes expire the same way.
    if (store.durable) void this.#expireStored(cutoff).catch(onError);
  }

  async #expireStored(cutoff: number): Promise<void> {
    const { store } = this.#options;
    for (const id of await store.sessions.idleSince(cutoff, 100)) {
      if (this.#sessions.has(id) || this.#rehydrating.has(id)) continue;
      await store.sessions.delete(id);
      await store.log.dropSession(id);
    }
  }
}
