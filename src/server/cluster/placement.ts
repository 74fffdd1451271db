/**
 * Where a session lives: held in this process; at rest in a durable store (then it is
 * rebuilt here on its next request, through the same path a restart uses); or, in a
 * cluster, owned by another replica (then it is served from the shared log and its POSTs
 * are carried to the owner) — until that owner's lease lapses and this replica takes it
 * over. One decision, one home: the endpoint routes requests, sessions run them, this
 * module places them.
 */
import { VISIBLE_ASCII } from '../../protocol/headers.js';
import { ContinuityError, toError } from '../../protocol/errors.js';
import type { SessionRecord, Store } from '../../store/types.js';
import type { Cluster } from './cluster.js';
import type { ServerFactory } from '../session/context.js';
import type { ResolvedLimits } from '../stream/limits.js';
import { RemoteReaders } from './remote-readers.js';
import { RemoteSession } from './remote-session.js';
import { serveCarried } from './serve-carried.js';
import { LocalSession } from '../session/local.js';
import { SessionMoved, type PlacedSession } from '../session/placed.js';
import { Session, type SessionDeps } from '../session/session.js';
import { countFencedWrite, type ServerObserver } from '../../telemetry/server.js';
import { Drain } from './drain.js';
import { dropStored, idlePast, sweepHeld, sweepStored } from './idle-expiry.js';

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
  /** Counts rebuilds and passivations, and calls their hooks. */
  readonly observer?: ServerObserver | undefined;
  /** Sessions can be rebuilt (`EndpointOptions.rebuildable`). */
  readonly rebuildable: boolean;
  now: () => number;
  onError: (error: Error) => void;
}

/** How many times one request may find its session moved before it is refused. */
const MAX_PLACEMENTS = 3;
/** How long a request waits for a silent owner's lease to lapse, in leases. */
const LAPSE_WAIT = 1.5;
/** A rebuild's outcome, dropped: whoever waits for it only waits for its end. */
const settle = (): void => {};
/** Without a cluster, how long a request waits for a held session that is ending to leave, ms. */
const LEAVE_WAIT_MS = 1000;

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
  /** The graceful stop, once `close({ drainMs })` began it. */
  readonly #drain = new Drain();
  readonly #draining = (): boolean => this.#drain.active;
  /** Shared by every session of this endpoint; `onEnd` is wired to this placement. */
  readonly deps: SessionDeps;
  /** Readers of sessions other replicas own (clusters only). */
  readonly #remote: RemoteReaders | undefined;

  constructor(options: PlacementOptions, deps: Omit<SessionDeps, 'onEnd' | 'shared'>) {
    this.#options = options;
    const { cluster } = options;
    this.deps = {
      ...deps,
      shared: cluster !== undefined,
      onEnd: (session) => {
        this.#drain.ended(session);
        if (this.#sessions.get(session.sessionId) !== session) return;
        this.#sessions.delete(session.sessionId);
        if (!cluster) return;
        // Awaited by close(), so a replica stopping cleanly hands its sessions over at once.
        const release = cluster.release(session.sessionId).catch(() => {});
        this.#releasing.add(release);
        void release.finally(() => this.#releasing.delete(release));
      },
    };
    if (cluster) {
      this.#remote = new RemoteReaders(options.store.sessions, cluster.bus, options.onError);
      cluster.onLost = (id) => void this.#sessions.get(id)?.shutdown().catch(options.onError);
      const owner = {
        cluster,
        held: (id: string) => this.#sessions.get(id),
        lost: (s: Session) => this.lost(s),
        settled: (id: string) => this.#rehydrating.get(id)?.then(settle, settle),
        draining: this.#draining,
      };
      cluster.serve = (message) => serveCarried(owner, message);
    }
    const { limits } = options;
    this.#passivates = (options.store.durable || cluster !== undefined) && options.rebuildable;
    const every = Math.min(limits.sessionIdleMs / 2, this.#passivates ? limits.passivateAfterMs / 2 : Infinity, 60_000);
    this.#sweep = setInterval(() => this.#expire(), every);
    this.#sweep.unref?.();
  }

  /** Sessions held in this process. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Sessions of this process with an upgrade offer outstanding. */
  pendingUpgrades(): number {
    let n = 0;
    for (const s of this.#sessions.values()) if (s.upgrade.upgradeState === 'upgrade-pending') n++;
    return n;
  }

  /**
   * Runs `work` on the session `id` of `principal`, wherever it is placed. A request that
   * finds its session moved (this replica was fenced off, or the owner it was carried to
   * did not take it) is placed again; an owner that does not answer is waited for until
   * its lease lapses (about `leaseMs` × 1.5 at most), then this replica takes it over.
   * A held session found ending (let go: a drain, a passivation) is waited out and placed
   * again, never answered as unknown.
   */
  async run<T>(id: string, principal: string | undefined, work: (session: PlacedSession) => Promise<T>): Promise<T> {
    return this.#drain.placing(() => this.#run(id, principal, work));
  }

  async #run<T>(id: string, principal: string | undefined, work: (session: PlacedSession) => Promise<T>): Promise<T> {
    let deadline: number | undefined;
    for (let attempt = 1; ; attempt++) {
      // A session bound to a principal is invisible to anyone else: same answer as unknown,
      // decided from the stored record before it is admitted, rebuilt or taken over here.
      const session = await this.find(id, (record) => record.principal === principal);
      if (attempt < MAX_PLACEMENTS && (await this.#left(session))) continue;
      if (!session || session.terminated || session.record.principal !== principal) throw new ContinuityError('session-not-found');
      try {
        return await work(session);
      } catch (error) {
        // Let go under the request, before it ran (a drain, a passivation): placed again.
        const gone = error instanceof ContinuityError && error.code === 'session-not-found';
        if (gone && attempt < MAX_PLACEMENTS && (await this.#left(session))) continue;
        if (!(error instanceof SessionMoved)) throw error;
        if (attempt >= MAX_PLACEMENTS) throw new ContinuityError('owner-unavailable');
        if (error.owner !== undefined) {
          // A draining replica does not wait past its drain: the request is answered, not cut.
          deadline ??= Date.now() + (this.#options.cluster?.leaseMs ?? 0) * LAPSE_WAIT;
          const until = deadline;
          await this.#options.cluster?.lapse(id, error.owner, () => Math.min(until, this.#drain.ends));
        }
      }
    }
  }

  /**
   * Is `placed` a session held here that is ending (let go, or deleted)? Then this waits
   * until it has left this process, and the request is placed again: a let-go session is
   * found in the store, a deleted one is not. False if it is not ending, or still has not
   * left after a lease (then it is judged as found).
   */
  async #left(placed: PlacedSession | undefined): Promise<boolean> {
    if (!(placed instanceof LocalSession) || !placed.terminated) return false;
    const { session } = placed;
    if (this.#sessions.get(session.sessionId) !== session) return true;
    return this.#drain.leave(session, this.#options.cluster?.leaseMs ?? LEAVE_WAIT_MS);
  }

  /**
   * The session `id`: from this process, rebuilt from the store, or owned elsewhere;
   * undefined if unknown. `visible` judges the stored record first (say, its principal):
   * a session it hides is unknown, decided before anything is admitted, rebuilt or taken
   * over, so the answer is the same as for an id that never existed.
   */
  async find(id: string, visible: (record: SessionRecord) => boolean = () => true): Promise<PlacedSession | undefined> {
    const local = this.#sessions.get(id);
    if (local) return visible(local.record) ? this.#local(local) : undefined;
    if (!plausibleSessionId(id)) return undefined;
    const { cluster, store } = this.#options;
    if (!cluster && !store.durable) return undefined;
    const record = await store.sessions.get(id);
    if (!record || !visible(record)) return undefined;
    if (cluster) return this.#locate(record, cluster);
    if (await this.#expireIdle(record)) return undefined;
    return this.#local(await this.#rehydrate(id, undefined));
  }

  #local(session: Session): LocalSession;
  #local(session: Session | undefined): LocalSession | undefined;
  #local(session: Session | undefined): LocalSession | undefined {
    return session && new LocalSession(session, (s) => this.lost(s), this.#draining);
  }

  /** Places a session just initialized here: the record is stored first (and claimed in a cluster), then the session is held. */
  async create(record: SessionRecord): Promise<Session> {
    if (this.#drain.active) throw new ContinuityError('server-draining');
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
    countFencedWrite();
    await this.#options.cluster?.let(session.sessionId);
    await session.shutdown();
  }

  get draining(): boolean {
    return this.#drain.active;
  }

  /** A graceful stop (see {@link Drain}); then {@link close} leaves the rest. True when nothing was left. */
  drain(drainMs: number): Promise<boolean> {
    return this.#drain.run(drainMs, () => [...this.#sessions.values()], this.#options.onError);
  }

  /** Is anything running here that closing now would cut: a call in flight, a request being placed? */
  get busy(): boolean {
    return this.#drain.busy(this.#sessions.values());
  }

  /** Leaves every session: durable or shared ones stay in the store for the next process, others end. */
  async close(): Promise<void> {
    clearInterval(this.#sweep);
    const { store, onError, cluster } = this.#options;
    const keep = store.durable || cluster !== undefined;
    await Promise.all([...this.#sessions.values()].map((s) => (keep ? s.shutdown() : s.terminate()).catch(onError)));
    this.#sessions.clear();
    await Promise.all(this.#releasing);
    this.#remote?.close();
    await cluster?.close();
  }

  #admit(): void {
    if (this.#sessions.size >= this.#options.limits.maxSessions) throw new ContinuityError('session-limit');
  }

  /** A session this process does not hold, in a cluster: take it if it is free, else point at its owner. */
  async #locate(record: SessionRecord, cluster: Cluster): Promise<PlacedSession | undefined> {
    const { store, limits, keepAliveMs, onError } = this.#options;
    const { id } = record;
    await cluster.ready();
    // While draining, a session owned by another replica is served as usual; a free one is left for the others.
    const lease = this.#drain.active ? await cluster.ownership.current(id) : await cluster.claim(id);
    if (this.#drain.active && (!lease || lease.owner === cluster.replicaId)) throw new ContinuityError('server-draining');
    if (!lease) return undefined;
    if (lease.owner === cluster.replicaId) {
      if (await this.#expireIdle(record)) {
        await cluster.let(id);
        return undefined;
      }
      return this.#local(await this.#rehydrate(id, lease.token));
    }
    return new RemoteSession(record, lease.owner, {
      store,
      cluster,
      limits,
      keepAliveMs,
      retryMs: this.deps.retryMs,
      process: this.deps.process,
      readers: this.#remote as RemoteReaders,
      onError,
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
      if (!(error instanceof ContinuityError)) onError(toError(error));
      return !(error instanceof ContinuityError && error.code === 'store-unavailable');
    }
  }

  /**
   * A session at rest idle past `sessionIdleMs` (which nobody else runs: no cluster, or
   * this replica holds its lease) is deleted on its next request, whenever the sweep would
   * have come: it answers 404 like any expired session.
   */
  async #expireIdle(record: SessionRecord): Promise<boolean> {
    const { store, limits, now } = this.#options;
    if (this.#rehydrating.has(record.id) || !idlePast(record, limits.sessionIdleMs, now())) return false;
    await dropStored(store, record.id);
    return true;
  }

  /** A session this process does not hold, rebuilt from the store; undefined if unknown. */
  #rehydrate(id: string, fence: number | undefined): Promise<Session | undefined> {
    if (this.#drain.active) return Promise.reject(new ContinuityError('server-draining'));
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
      // Declared unrebuildable: ended here, and said so (404 with its reason), never continued without its state.
      if (!this.#options.rebuildable) throw new ContinuityError('session-not-rebuildable');
      await session.rehydrate(await this.#options.server(session.lasting.context(true)));
    } catch (error) {
      if (error instanceof ContinuityError && (error.code === 'session-superseded' || error.code === 'session-not-rebuildable'))
        await session.terminate().catch(onError);
      else await session.shutdown().catch(onError);
      throw error;
    }
    this.#sessions.set(id, session);
    this.#options.observer?.rebuild(id);
    return session;
  }

  #expire(): void {
    const { store, limits, now, onError, cluster, observer } = this.#options;
    const at = now();
    const cutoff = at - limits.sessionIdleMs;
    sweepHeld(this.#sessions.values(), { cutoff, quiet: this.#passivates ? at - limits.passivateAfterMs : undefined, observer, onError });
    // Sessions at rest in the store (kept from earlier processes, passivated, left by a
    // replica that died) expire the same way; in a cluster, each under its lease.
    if (store.durable || cluster) {
      const held = (id: string): boolean => this.#sessions.has(id) || this.#rehydrating.has(id);
      void sweepStored({ store, cluster, held }, cutoff).catch(onError);
    }
  }
}
