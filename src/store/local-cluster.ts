/**
 * Ownership and bus for stores that live in one process (memory, SQLite): a real lease
 * table and an in-process bus, so several endpoints sharing one store object follow the
 * same protocol as replicas sharing Redis, and fencing is tested on every store.
 *
 * Everything here is synchronous underneath: a fence check made right before a
 * synchronous write (the memory maps, a better-sqlite3 transaction) is atomic with it.
 */
import { ContinuityError, toError } from '../protocol/errors.js';
import type { AppendNotice, ClusterBus, Lease, Ownership, Unsubscribe } from './types.js';

interface LeaseRow {
  owner: string;
  token: number;
  expiresAt: number;
}

/** Validates the arguments every ownership implementation takes. */
export function checkLeaseArgs(owner: string, leaseMs: number): void {
  if (typeof owner !== 'string' || owner === '') throw new TypeError('ownership: owner must be a non-empty string');
  if (!(typeof leaseMs === 'number' && Number.isFinite(leaseMs) && leaseMs > 0)) {
    throw new RangeError(`ownership: leaseMs must be a positive number, got ${String(leaseMs)}`);
  }
}

/** Throws `store-fenced` unless `fence` is absent or equals `current` (0 when the session never had an owner). */
export function checkFence(session: string, fence: number | undefined, current: number): void {
  if (fence === undefined || fence === current) return;
  throw new ContinuityError('store-fenced', undefined, { session, fence, current });
}

/** The lease table of one process. */
export class LocalOwnership implements Ownership {
  readonly #rows = new Map<string, LeaseRow>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** The session's current fencing token (0 if it never had an owner); for synchronous fence checks. */
  token(session: string): number {
    return this.#rows.get(session)?.token ?? 0;
  }

  /** Throws `store-fenced` when `fence` is given and is not the session's current token. */
  check(session: string, fence: number | undefined): void {
    checkFence(session, fence, this.token(session));
  }

  /** Forgets a session's lease (its data is gone). */
  forget(session: string): void {
    this.#rows.delete(session);
  }

  async acquire(session: string, owner: string, leaseMs: number): Promise<Lease> {
    checkLeaseArgs(owner, leaseMs);
    const now = this.#now();
    const row = this.#rows.get(session);
    if (row && row.owner !== owner && row.expiresAt > now) return { ...row };
    const next: LeaseRow = {
      owner,
      token: row ? (row.owner === owner ? row.token : row.token + 1) : 1,
      expiresAt: now + leaseMs,
    };
    this.#rows.set(session, next);
    return { ...next };
  }

  async renew(session: string, owner: string, token: number, leaseMs: number): Promise<boolean> {
    checkLeaseArgs(owner, leaseMs);
    const row = this.#rows.get(session);
    if (!row || row.owner !== owner || row.token !== token) return false;
    row.expiresAt = this.#now() + leaseMs;
    return true;
  }

  async release(session: string, owner: string, token: number): Promise<void> {
    const row = this.#rows.get(session);
    if (row && row.owner === owner && row.token === token) row.expiresAt = 0;
  }

  async current(session: string): Promise<Lease | undefined> {
    const row = this.#rows.get(session);
    return row && row.expiresAt > this.#now() ? { ...row } : undefined;
  }
}

/**
 * A listener that throws is a bug in the listener: it is reported as a process warning,
 * and neither stops the other listeners nor ends the process.
 */
export function reportListenerError(error: unknown): void {
  const e = toError(error);
  process.emitWarning(`mcp-continuity: a store bus listener threw: ${e.stack ?? e.message}`, 'ContinuityBusWarning');
}

/** Calls each listener; one that throws does not stop the others. */
function fanOut<T>(listeners: Iterable<(value: T) => void>, value: T): void {
  for (const listener of [...listeners]) {
    try {
      listener(value);
    } catch (error) {
      reportListenerError(error);
    }
  }
}

/** A bus between the users of one store object in one process. */
export class LocalBus implements ClusterBus {
  readonly #appends = new Map<string, Set<(notice: AppendNotice) => void>>();
  readonly #inboxes = new Map<string, Set<(message: string) => void>>();

  /** Synchronous publish, for stores to call right after an append. Cheap when nobody listens. */
  notifyAppend(session: string, stream: string, lastSeq: number): void {
    this.#notify({ session, stream, lastSeq, closed: false });
  }

  /** Synchronous publish, for stores to call right after a stream is closed. */
  notifyClose(session: string, stream: string, lastSeq: number): void {
    this.#notify({ session, stream, lastSeq, closed: true });
  }

  #notify(notice: AppendNotice): void {
    const listeners = this.#appends.get(notice.session);
    if (listeners) fanOut(listeners, notice);
  }

  async publishAppend(session: string, stream: string, lastSeq: number): Promise<void> {
    this.notifyAppend(session, stream, lastSeq);
  }

  async subscribeAppends(session: string, listener: (notice: AppendNotice) => void): Promise<Unsubscribe> {
    return subscribe(this.#appends, session, listener);
  }

  async sendToOwner(owner: string, message: string): Promise<number> {
    const listeners = this.#inboxes.get(owner);
    if (!listeners) return 0;
    fanOut(listeners, message);
    return 1; // one receiver: this process (as Redis counts connections, not listeners)
  }

  async subscribeInbox(owner: string, listener: (message: string) => void): Promise<Unsubscribe> {
    return subscribe(this.#inboxes, owner, listener);
  }
}

function subscribe<T>(map: Map<string, Set<(value: T) => void>>, key: string, listener: (value: T) => void): Unsubscribe {
  // A wrapper per subscription, so the same function subscribed twice is two subscriptions.
  const entry = (value: T): void => listener(value);
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(entry);
  return async () => {
    const current = map.get(key);
    if (!current) return;
    current.delete(entry);
    if (current.size === 0) map.delete(key);
  };
}
