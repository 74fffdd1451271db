/**
 * Where a session lives: held in this process; at rest in a durable store (then it is
 * rebuilt here on its next request, through the same path a restart uses); or, in a
 * cluster, owned by another replica (then it is served from the shared log and its POSTs
 * are carried to the owner) — until that owner's lease lapses and this replica takes it
 * over. One decision, one home: the endpoint routes requests, sessions run them, this
 * module places them.
 */
import { ContinuityError } from '../../protocol/errors.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { Carried, CarriedReply, Cluster } from './cluster.js';
import type { ServerFactory } from '../session/context.js';
import type { ResolvedLimits } from '../stream/limits.js';
import { RemoteSession } from './remote-session.js';
import { Session, type SessionDeps } from '../session/session.js';
import { messageExtra } from '../session/transport.js';
import { proceedOrRefuse } from '../upgrade/gate.js';

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** Could `id` name a session at all? (Anything else is unknown without asking the store.) */
export function plausibleSessionId(id: string): boolean {
  return id.length <= 256 && VISIBLE_ASCII.test(id);
}

export interface PlacementOptions {
  readonly store: Store;
  readonly limits: ResolvedLimits;
  readonly server: ServerFactory;
  /** Present when replicas share the store. */
  readonly cluster: Cluster | undefined;
  readonly keepAliveMs: number;
  now(): number;
  onError(error: Error): void;
}

/** A session as a request finds it: run here, or owned by another replica. */
export type Placed = Session | RemoteSession;

/** The sessions of one endpoint, and where each one is. */
export class Placement {
  readonly #options: PlacementOptions;
  readonly #sessions = new Map<string, Session>();
  /** Rehydrations under way, so concurrent requests for one session share one. */
  readonly #rehydrating = new Map<string, Promise<Session | undefined>>();
  readonly #sweep: ReturnType<typeof setInterval>;
  readonly #releasing = new Set<Promise<void>>();
  /** Sessions can be dropped from memory and rebuilt from the store. */
  readonly #passivates: boolean;
  /** Shared by every session of this endpoint; `onEnd` is wired to this placement. */
  readonly deps: SessionDeps;

  constructor(options: PlacementOptions, deps: Omit<SessionDeps, 'onEnd' | 'shared'>) {
    this.#options = options;
    const { cluster } = options;
    this.deps = {
      ...deps,
      shared: cluster !== undefined,
      onEnd: (session) => {
        if (this.#sessions.get(session.sessionId) !== session) return;
        this.#sessions.delete(session.sessionId);
        if (!cluster) return;
        // Awaited by close(), so a replica stopping cleanly hands its sessions over at once.
        const release = cluster.let(session.sessionId, true).catch(() => {});
        this.#releasing.add(release);
        void release.finally(() => this.#releasing.delete(release));
      },
    };
    if (cluster) {
      cluster.onLost = (id) => void this.#sessions.get(id)?.shutdown().catch(options.onError);
      cluster.serve = (message) => this.#serveCarried(message);
    }
    const { limits } = options;
    this.#passivates = options.store.durable || cluster !== undefined;
    const every = Math.min(limits.sessionIdleMs / 2, this.#passivates ? limits.passivateAfterMs / 2 : Infinity, 60_000);
    this.#sweep = setInterval(() => this.#expire(), every);
    this.#sweep.unref?.();
  }

  /** Sessions held in this process. */
  get size(): number {
    return this.#sessions.size;
  }

  sessions(): IterableIterator<Session> {
    return this.#sessions.values();
  }

  /** The session `id`: from this process, rebuilt from the store, or owned elsewhere; undefined if unknown. */
  async find(id: string): Promise<Placed | undefined> {
    const local = this.#sessions.get(id);
    if (local) return local;
    if (!plausibleSessionId(id)) return undefined;
    const { cluster, store } = this.#options;
    if (!cluster) return store.durable ? this.#rehydrate(id, undefined) : undefined;
    return this.#locate(id, cluster);
  }

  /** Places a session just initialized here: the record is stored first (and claimed in a cluster), then the session is held. */
  async create(record: SessionRecord): Promise<Session> {
    this.#admit();
    const { store, cluster } = this.#options;
    await store.sessions.create(record);
    let fence: number | undefined;
    if (cluster) {
      await cluster.ready();
      const lease = await cluster.claim(record.id);
      if (lease.owner !== cluster.replicaId) throw new ContinuityError('internal-error', 'A new session is owned by another replica');
      fence = lease.token;
    }
    const session = new Session(record, this.deps, fence);
    this.#sessions.set(record.id, session);
    return session;
  }

  /**
   * A local session was fenced off (another replica took it over while this one was
   * paused or cut off): it is dropped without writing anything.
   */
  async lost(session: Session): Promise<void> {
    await this.#options.cluster?.let(session.sessionId, false);
    await session.shutdown();
  }

  /** Leaves every session: durable or shared ones stay in the store for the next process, others end. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const { store, onError, cluster } = this.#options;
    const keep = store.durable || cluster !== undefined;
    await Promise.all([...this.#sessions.values()].map((s) => (keep ? s.shutdown() : s.terminate()).catch(onError)));
    this.#sessions.clear();
    await Promise.all(this.#releasing);
    await cluster?.close();
  }

  #admit(): void {
    if (this.#sessions.size >= this.#options.limits.maxSessions) throw new ContinuityError('session-limit');
  }

  /** A session this process does not hold, in a cluster: take it if it is free, else point at its owner. */
  async #locate(id: string, cluster: Cluster): Promise<Placed | undefined> {
    const { store, limits, keepAliveMs } = this.#options;
    await cluster.ready();
    const record = await store.sessions.get(id);
    if (!record) return undefined;
    const lease = await cluster.claim(id);
    if (lease.owner === cluster.replicaId) return this.#rehydrate(id, lease.token);
    return new RemoteSession(record, lease.owner, {
      store, cluster, limits, keepAliveMs,
      checkOwner: (session, takeOver) => this.#takeOverIfFree(session, takeOver),
    });
  }

  /** A tail's watchdog: the owner's lease lapsed, so this replica takes the session (and answers its orphans). */
  async #takeOverIfFree(id: string, takeOver: boolean): Promise<boolean> {
    const { cluster, onError } = this.#options;
    if (!cluster || this.#sessions.has(id)) return true;
    try {
      if ((await cluster.ownership.current(id)) === undefined && takeOver) await this.find(id);
      return true;
    } catch (error) {
      if (!(error instanceof ContinuityError)) onError(error instanceof Error ? error : new Error(String(error)));
      return !(error instanceof ContinuityError && error.code === 'store-unavailable');
    }
  }

  /** A session this process does not hold, rebuilt from the store; undefined if unknown. */
  #rehydrate(id: string, fence: number | undefined): Promise<Session | undefined> {
    let pending = this.#rehydrating.get(id);
    if (!pending) {
      pending = this.#rebuild(id, fence).finally(() => this.#rehydrating.delete(id));
      this.#rehydrating.set(id, pending);
    }
    return pending;
  }

  async #rebuild(id: string, fence: number | undefined): Promise<Session | undefined> {
    const { store, onError } = this.#options;
    const record = await store.sessions.get(id);
    if (!record) return undefined;
    this.#admit();
    const session = new Session(record, this.deps, fence);
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

  /** A POST or DELETE another replica carried here, for a session this replica owns. */
  async #serveCarried(message: Carried): Promise<CarriedReply> {
    const { cluster } = this.#options;
    const session = this.#sessions.get(message.session);
    // Not (or no longer) ours by our own clock: the sender takes the session over instead.
    if (!session || session.terminated || !cluster?.holds(message.session)) {
      return { ok: false, code: 'store-fenced', message: 'This replica does not own the session' };
    }
    if (message.t === 'delete') {
      await session.terminate();
      return { ok: true, accepted: { kind: 'accepted' } };
    }
    proceedOrRefuse(await session.upgradeInput('post'));
    const request = new Request(message.url, { method: 'POST', headers: message.headers });
    const extra = messageExtra(request, message.authInfo, () => {});
    try {
      return { ok: true, accepted: await session.accept(message.messages, extra, message.batch) };
    } catch (error) {
      if (error instanceof ContinuityError && error.code === 'store-fenced') {
        await this.lost(session);
        return { ok: false, code: 'store-fenced', message: error.message };
      }
      throw error;
    }
  }

  #expire(): void {
    const { store, limits, now, onError, cluster } = this.#options;
    const at = now();
    const cutoff = at - limits.sessionIdleMs;
    const quiet = at - limits.passivateAfterMs;
    for (const s of this.#sessions.values()) {
      if (s.hasReader) continue;
      if (s.record.lastActiveAt < cutoff) void s.terminate().catch(onError);
      // Passivation: nothing attached, nothing owed (no request in flight, no upgrade under
      // way), so nothing but the SDK server's own state is lost by rebuilding it later.
      else if (this.#passivates && s.record.lastActiveAt < quiet && s.canOfferUpgrade) void s.shutdown().catch(onError);
    }
    // Sessions a durable store kept from earlier processes expire the same way.
    if (store.durable && !cluster) void this.#expireStored(cutoff).catch(onError);
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
