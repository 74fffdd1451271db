/**
 * This replica's part in a cluster: its id, the leases it holds (renewed in the
 * background), and a small request/reply protocol over the store's bus that carries a
 * POST or DELETE to the replica owning its session. Nothing here runs per event: an
 * endpoint on a store without a cluster has no `Cluster` at all.
 */
import { randomToken } from '../../protocol/crypto.js';
import { ContinuityError, toError } from '../../protocol/errors.js';
import type { ClusterBus, Lease, Ownership, Store, Unsubscribe } from '../../store/types.js';
import type { ClusterOptions } from './options.js';
import { decodeEnvelope, encodeEnvelope, type CallOutcome, type Carried, type CarriedReply, type Envelope } from './wire.js';

/** Default lease, ms. Short enough that a dead owner's clients wait little, long enough to renew three times. */
export const DEFAULT_LEASE_MS = 3000;

/** Tokens of leases this replica let go, remembered so that taking one back is not called a takeover. */
const MAX_REMEMBERED_TOKENS = 10_000;

interface Held {
  token: number;
  /** By this process's clock: past it, this replica no longer counts on the lease. */
  validUntil: number;
}

export interface ClusterParts {
  readonly ownership: Ownership;
  readonly bus: ClusterBus;
  readonly replicaId?: string | undefined;
  readonly leaseMs?: number | undefined;
  onError: (error: Error) => void;
}

export class Cluster {
  readonly replicaId: string;
  readonly leaseMs: number;
  readonly ownership: Ownership;
  readonly bus: ClusterBus;
  readonly #held = new Map<string, Held>();
  readonly #calls = new Map<string, { resolve: (outcome: CallOutcome) => void; timer: ReturnType<typeof setTimeout> }>();
  /** One timer per watched session, calling every watcher's check (each tail asks its own question). */
  readonly #watched = new Map<string, { checks: Set<() => void>; timer: ReturnType<typeof setInterval> }>();
  readonly #onError: (error: Error) => void;
  #renewer: ReturnType<typeof setInterval> | undefined;
  #inbox: Promise<Unsubscribe> | undefined;
  /** Serves a message carried here; set by the endpoint. */
  serve: (message: Carried) => Promise<CarriedReply> = async () => ({ ok: false, code: 'session-not-found', message: 'Not serving' });
  /** This replica lost a session (fenced, or its data is gone): drop it without writing. */
  onLost: (session: string) => void = () => {};
  /** This replica took `session` over from another one (its fencing token rose to `token`). */
  onTakeover: (session: string, token: number) => void = () => {};
  readonly #letGo = new Map<string, number>();
  /** Counts the bus's reconnections: a reply sent to this replica while it was away is lost. */
  #reconnections = 0;

  constructor(parts: ClusterParts) {
    this.replicaId = parts.replicaId ?? `r-${randomToken(9)}`;
    this.leaseMs = parts.leaseMs ?? DEFAULT_LEASE_MS;
    if (!(this.leaseMs >= 30)) throw new RangeError(`cluster.leaseMs must be at least 30, got ${String(parts.leaseMs)}`);
    this.ownership = parts.ownership;
    this.bus = parts.bus;
    this.#onError = parts.onError;
    parts.bus.onReconnect?.(() => this.#reconnections++);
  }

  /** Subscribes the inbox and starts renewing; idempotent. Requests wait for it once. */
  ready(): Promise<unknown> {
    if (!this.#inbox) {
      this.#inbox = this.bus.subscribeInbox(this.replicaId, (raw) => this.#receive(raw));
      // One renewer for the cluster's life: a retried subscription must not start a second.
      this.#renewer ??= setInterval(() => void this.#renewAll(), Math.max(10, Math.floor(this.leaseMs / 3)));
      this.#renewer.unref?.();
      // A failed subscription is retried by the next request.
      this.#inbox.catch(() => (this.#inbox = undefined));
    }
    return this.#inbox;
  }

  /**
   * Claims `session` for this replica: our lease (its fencing token) if it was free or
   * ours, else the other owner's live lease.
   */
  async claim(session: string): Promise<Lease> {
    const started = Date.now();
    const lease = await this.ownership.acquire(session, this.replicaId, this.leaseMs);
    if (lease.owner !== this.replicaId) return lease;
    const before = this.#held.get(session)?.token ?? this.#letGo.get(session);
    this.#letGo.delete(session);
    this.#held.set(session, { token: lease.token, validUntil: started + this.leaseMs });
    // The token rises only when the owner changes: a first owner holds 1, and a lease this
    // replica let go and takes back keeps its token.
    if (lease.token > 1 && before !== lease.token) this.onTakeover(session, lease.token);
    return lease;
  }

  /** Does this replica still count on its lease of `session` (by its own clock)? */
  holds(session: string): boolean {
    const held = this.#held.get(session);
    return held !== undefined && held.validUntil > Date.now();
  }

  /** Stops renewing `session`: its lease lapses on its own (see {@link release} to free it at once). */
  let(session: string): Promise<void> {
    this.#stopRenewing(session);
    return Promise.resolve();
  }

  /** Stops renewing `session` and frees it for the next replica at once. */
  async release(session: string): Promise<void> {
    const held = this.#stopRenewing(session);
    if (held) await this.ownership.release(session, this.replicaId, held.token);
  }

  #stopRenewing(session: string): { token: number } | undefined {
    const held = this.#held.get(session);
    if (!held) return undefined;
    this.#held.delete(session);
    this.#letGo.set(session, held.token);
    if (this.#letGo.size > MAX_REMEMBERED_TOKENS) this.#letGo.delete(this.#letGo.keys().next().value as string);
    return held;
  }

  /**
   * Carries `body` to replica `owner` and waits for its reply. A busy owner is waited for
   * as long as it holds a live lease on the session (checked every lease period); one
   * that loses it without answering makes the outcome `unknown`. A message is carried once.
   */
  async call(owner: string, body: Carried): Promise<CallOutcome> {
    await this.ready();
    const id = randomToken(9);
    const reconnections = this.#reconnections;
    const reply = new Promise<CallOutcome>((resolve) => {
      const check = (): void => {
        // The bus reconnected since the call went out, and a lease period later there is still
        // no reply: it may have been sent while this replica was away (the owner retries an
        // undelivered reply for a lease period). Waiting on would wait forever.
        if (this.#reconnections !== reconnections) return this.#settle(id, { t: 'unknown' });
        void this.ownership.current(body.session).then(
          (lease) => {
            const call = this.#calls.get(id);
            if (!call) return;
            if (lease?.owner === owner) call.timer = setTimeout(check, this.leaseMs);
            else this.#settle(id, { t: 'unknown' });
          },
          () => this.#settle(id, { t: 'unknown' }),
        );
      };
      this.#calls.set(id, { resolve, timer: setTimeout(check, this.leaseMs) });
    });
    const envelope: Envelope = { t: 'call', id, from: this.replicaId, body };
    const receivers = await this.bus.sendToOwner(owner, encodeEnvelope(envelope)).catch((error: unknown) => {
      this.#settle(id, { t: 'unknown' });
      throw new ContinuityError('store-unavailable', undefined, undefined, { cause: error });
    });
    if (receivers === 0) this.#settle(id, { t: 'undelivered' });
    return reply;
  }

  /**
   * Calls `check` every half lease while anyone watches `session` (a tail on a session
   * owned elsewhere), so a dead owner's session is taken over even if no request comes.
   * Returns the unwatch function.
   */
  watch(session: string, check: () => void): () => void {
    let entry = this.#watched.get(session);
    if (!entry) {
      const checks = new Set<() => void>();
      const timer = setInterval(
        () => {
          for (const c of checks) c();
        },
        Math.max(10, Math.floor(this.leaseMs / 2)),
      );
      timer.unref?.();
      entry = { checks, timer };
      this.#watched.set(session, entry);
    }
    // Each watcher's own check: a request stream's tail takes the session over when its
    // owner's lease lapsed; a standalone stream's only notices an unreachable store. One
    // shared check would let whichever tail came first decide for all of them.
    const mine = (): void => check();
    entry.checks.add(mine);
    return () => {
      const e = this.#watched.get(session);
      if (!e || !e.checks.delete(mine)) return;
      if (e.checks.size === 0) {
        clearInterval(e.timer);
        this.#watched.delete(session);
      }
    };
  }

  /**
   * Waits until `owner` no longer holds the lease of `session`; `owner-unavailable` at
   * `deadline()` (asked again on every look, so a drain that begins meanwhile cuts it short).
   */
  async lapse(session: string, owner: string, deadline: () => number): Promise<void> {
    for (;;) {
      const lease = await this.ownership.current(session);
      if (lease?.owner !== owner) return;
      const left = deadline() - Date.now();
      if (left <= 0) throw new ContinuityError('owner-unavailable');
      await new Promise((resolve) => setTimeout(resolve, Math.min(left, Math.max(10, Math.min(this.leaseMs / 5, lease.expiresAt - Date.now())))));
    }
  }

  /** Releases every lease (a graceful stop: the next request anywhere takes over at once) and unsubscribes. */

  async close(): Promise<void> {
    clearInterval(this.#renewer);
    this.#renewer = undefined;
    for (const { timer } of this.#watched.values()) clearInterval(timer);
    this.#watched.clear();
    for (const id of [...this.#calls.keys()]) this.#settle(id, { t: 'unknown' });
    await Promise.all([...this.#held.keys()].map((s) => this.release(s).catch(() => {})));
    const inbox = this.#inbox;
    this.#inbox = undefined;
    if (inbox) await (await inbox.catch(() => async () => {}))();
  }

  async #renewAll(): Promise<void> {
    await Promise.all(
      [...this.#held].map(async ([session, held]) => {
        const started = Date.now();
        try {
          if (await this.ownership.renew(session, this.replicaId, held.token, this.leaseMs)) {
            if (this.#held.get(session) === held) held.validUntil = started + this.leaseMs;
            return;
          }
        } catch (error) {
          // The store is unreachable: keep trying; fencing keeps us honest meanwhile.
          this.#onError(toError(error));
          return;
        }
        if (this.#held.get(session) !== held) return;
        this.#held.delete(session);
        this.onLost(session);
      }),
    );
  }

  #receive(raw: string): void {
    const envelope = decodeEnvelope(raw);
    if (!envelope) return; // not ours to read; nothing on the bus may end the process
    if (envelope.t === 'reply') {
      this.#settle(envelope.id, { t: 'reply', reply: envelope.body });
      return;
    }
    if (envelope.t !== 'call') return;
    const { id, from, body } = envelope;
    void this.serve(body)
      .catch((error: unknown): CarriedReply => {
        if (error instanceof ContinuityError) return { ok: false, code: error.code, message: error.message, detail: error.detail };
        this.#onError(toError(error));
        return { ok: false, code: 'internal-error', message: 'Internal error' };
      })
      .then((reply) => this.#reply(from, encodeEnvelope({ t: 'reply', id, body: reply })))
      .catch((error: unknown) => this.#onError(toError(error)));
  }

  /**
   * Sends a reply to the replica that carried the call. Nobody listening (0 receivers) is
   * most often that replica's subscription coming back after a lost store connection: the
   * reply is sent again, with backoff, for up to a lease period. A caller that is gone for
   * good counts the outcome as unknown on its own side.
   */
  async #reply(to: string, message: string): Promise<void> {
    const deadline = Date.now() + this.leaseMs;
    for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
      if ((await this.bus.sendToOwner(to, message)) > 0 || Date.now() + delay > deadline) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  #settle(id: string, outcome: CallOutcome): void {
    const call = this.#calls.get(id);
    if (!call) return;
    this.#calls.delete(id);
    clearTimeout(call.timer);
    call.resolve(outcome);
  }
}

/** The cluster part of an endpoint: when the store is shared (or the options ask for it) and has a bus. */
export function clusterOf(store: Store, options: ClusterOptions | undefined, onError: (error: Error) => void): Cluster | undefined {
  if (!(store.shared === true || options?.enabled === true)) return undefined;
  if (!store.bus) throw new TypeError(`The ${store.name} store has no bus: replicas cannot reach each other through it`);
  // The store's lease is the one the running replicas agreed on: a different one here would split them again.
  if (options?.leaseMs !== undefined && store.leaseMs !== undefined && options.leaseMs !== store.leaseMs) {
    throw new RangeError(`cluster.leaseMs ${options.leaseMs} disagrees with the store's leaseMs ${store.leaseMs}: give it in one place`);
  }
  return new Cluster({ ownership: store.ownership, bus: store.bus, replicaId: options?.replicaId, leaseMs: options?.leaseMs ?? store.leaseMs, onError });
}
