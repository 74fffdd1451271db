/**
 * This replica's part in a cluster: its id, the leases it holds (renewed in the
 * background), and a small request/reply protocol over the store's bus that carries a
 * POST or DELETE to the replica owning its session. Nothing here runs per event: an
 * endpoint on a store without a cluster has no `Cluster` at all.
 */
import { randomToken } from '../../protocol/crypto.js';
import { ContinuityError, type ErrorCode } from '../../protocol/errors.js';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { ClusterBus, Lease, Ownership, Store, Unsubscribe } from '../../store/types.js';
import type { ClusterOptions } from './options.js';
import type { Accepted } from '../session/post.js';
import { decodeEnvelope, encodeEnvelope, type Envelope } from './wire.js';

/** Default lease, ms. Short enough that a dead owner's clients wait little, long enough to renew three times. */
export const DEFAULT_LEASE_MS = 3000;

/** Tokens of leases this replica let go, remembered so that taking one back is not called a takeover. */
const MAX_REMEMBERED_TOKENS = 10_000;

/** A message carried to the owner of a session. */
export type Carried =
  | { t: 'post'; session: string; messages: JsonRpcMessage[]; batch: boolean; url: string; headers: Record<string, string>; authInfo?: unknown }
  | { t: 'delete'; session: string }
  /** A GET served on another replica: the owner's upgrade gate decides, and a standalone reader gets its priming event. */
  | { t: 'open'; session: string; input: 'resume' | 'standalone' };

/** The owner's answer. `after`: for an `open` standalone reader, the seq its priming event follows. */
export type CarriedReply =
  | { ok: true; accepted: Accepted; after?: number | undefined }
  | { ok: false; code: ErrorCode; message: string; detail?: Record<string, unknown> | undefined };

/**
 * What became of a carried message: the owner's reply; `undelivered` (nobody listened:
 * it certainly did not run); or `unknown` (delivered, and its receiver stopped answering
 * and lost its lease: it may have run, and must not be run again).
 */
export type CallOutcome = { t: 'reply'; reply: CarriedReply } | { t: 'undelivered' } | { t: 'unknown' };


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
  onError(error: Error): void;
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

  constructor(parts: ClusterParts) {
    this.replicaId = parts.replicaId ?? `r-${randomToken(9)}`;
    this.leaseMs = parts.leaseMs ?? DEFAULT_LEASE_MS;
    if (!(this.leaseMs >= 30)) throw new RangeError(`cluster.leaseMs must be at least 30, got ${String(parts.leaseMs)}`);
    this.ownership = parts.ownership;
    this.bus = parts.bus;
    this.#onError = parts.onError;
  }

  /** Subscribes the inbox and starts renewing; idempotent. Requests wait for it once. */
  ready(): Promise<unknown> {
    if (!this.#inbox) {
      this.#inbox = this.bus.subscribeInbox(this.replicaId, (raw) => this.#receive(raw));
      this.#renewer = setInterval(() => void this.#renewAll(), Math.max(10, Math.floor(this.leaseMs / 3)));
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

  /** Stops renewing `session`; with `release`, frees it for the next replica at once. */
  async let(session: string, release: boolean): Promise<void> {
    const held = this.#held.get(session);
    if (!held) return;
    this.#held.delete(session);
    this.#letGo.set(session, held.token);
    if (this.#letGo.size > MAX_REMEMBERED_TOKENS) this.#letGo.delete(this.#letGo.keys().next().value as string);
    if (release) await this.ownership.release(session, this.replicaId, held.token);
  }

  /**
   * Carries `body` to replica `owner` and waits for its reply. A busy owner is waited for
   * as long as it holds a live lease on the session (checked every lease period); one
   * that loses it without answering makes the outcome `unknown`. A message is carried once.
   */
  async call(owner: string, body: Carried): Promise<CallOutcome> {
    await this.ready();
    const id = randomToken(9);
    const reply = new Promise<CallOutcome>((resolve) => {
      const check = (): void => {
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
      const timer = setInterval(() => {
        for (const c of checks) c();
      }, Math.max(10, Math.floor(this.leaseMs / 2)));
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

  /** Releases every lease (a graceful stop: the next request anywhere takes over at once) and unsubscribes. */
  async close(): Promise<void> {
    clearInterval(this.#renewer);
    for (const { timer } of this.#watched.values()) clearInterval(timer);
    this.#watched.clear();
    for (const id of [...this.#calls.keys()]) this.#settle(id, { t: 'unknown' });
    await Promise.all([...this.#held.keys()].map((s) => this.let(s, true).catch(() => {})));
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
          this.#onError(error instanceof Error ? error : new Error(String(error)));
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
        this.#onError(error instanceof Error ? error : new Error(String(error)));
        return { ok: false, code: 'internal-error', message: 'Internal error' };
      })
      .then((reply) => this.bus.sendToOwner(from, encodeEnvelope({ t: 'reply', id, body: reply })))
      .catch((error: unknown) => this.#onError(error instanceof Error ? error : new Error(String(error))));
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
