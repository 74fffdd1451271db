/**
 * Idle expiry of sessions at rest in a durable or shared store: those no process holds
 * (passivated, left by a process that stopped or died). A session held in memory is
 * judged by its holder, which knows whether a reader is attached; one at rest is judged
 * by its stored `lastActiveAt`, and in a cluster only once this replica holds its lease,
 * so no other replica is running it meanwhile.
 */
import type { SessionRecord, Store } from '../../store/types.js';
import type { Cluster } from './cluster.js';
import type { Session } from '../session/session.js';
import type { ServerObserver } from '../../telemetry/server.js';

/** Index entries looked at per sweep, so a sweep's work is bounded. */
const SWEEP_BATCH = 100;

/** Has the stored session been idle past the limit? */
export function idlePast(record: SessionRecord, sessionIdleMs: number, now: number): boolean {
  return record.lastActiveAt < now - sessionIdleMs;
}

/** Deletes a session at rest: its record, lease and idle-index entry, then its log. */
export async function dropStored(store: Store, id: string): Promise<void> {
  await store.sessions.delete(id);
  await store.log.dropSession(id);
}

export interface SweepDeps {
  readonly store: Store;
  readonly cluster: Cluster | undefined;
  /** Is the session held (or being rebuilt) in this process? Its holder judges it. */
  held(id: string): boolean;
}

/**
 * Deletes sessions idle since before `cutoff` that nobody holds. The store's idle index
 * also lists sessions whose keys the store expired on its own (Redis `sessionTtlMs`):
 * deleting them is what keeps the index down to the live sessions.
 */
export async function sweepStored(deps: SweepDeps, cutoff: number): Promise<void> {
  const { store, cluster } = deps;
  for (const id of await store.sessions.idleSince(cutoff, SWEEP_BATCH)) {
    if (deps.held(id)) continue;
    if (!cluster) {
      await dropStored(store, id);
      continue;
    }
    // Another replica holds it (and judges it by its own memory), or takes it now: skip.
    if ((await cluster.ownership.current(id)) !== undefined) continue;
    const lease = await cluster.claim(id);
    if (lease.owner !== cluster.replicaId) continue;
    // Ours now: judge the record itself (the index may lag a write by a moment).
    const record = await store.sessions.get(id);
    if (record === undefined || record.lastActiveAt < cutoff) await dropStored(store, id);
    // Still active: free it for whoever it comes to next; dropped: nothing is left to free.
    if (record !== undefined && record.lastActiveAt >= cutoff) await cluster.release(id);
    else await cluster.let(id);
  }
}

export interface HeldSweep {
  /** Sessions last active before this end. */
  readonly cutoff: number;
  /** Sessions quiet since before this are passivated; undefined when sessions cannot be rebuilt. */
  readonly quiet: number | undefined;
  readonly observer?: ServerObserver | undefined;
  readonly onError: (error: Error) => void;
}

/** Ends the held sessions idle past the cutoff, and passivates the quiet ones that owe nothing. */
export function sweepHeld(sessions: Iterable<Session>, sweep: HeldSweep): void {
  const { cutoff, quiet, observer, onError } = sweep;
  for (const s of sessions) {
    if (s.hasReader) {
      // A reader keeps a session alive, in the store too: else other replicas' sweeps
      // (and this one's after a restart) would find it idle.
      s.touch();
      continue;
    }
    if (s.record.lastActiveAt < cutoff) void s.terminate().catch(onError);
    // Passivation: nothing attached, nothing owed (no request in flight, no upgrade under
    // way), so nothing but the SDK server's own state is lost by rebuilding it later.
    else if (quiet !== undefined && s.record.lastActiveAt < quiet && s.upgrade.canOfferUpgrade) {
      observer?.passivation(s.sessionId);
      void s.shutdown().catch(onError);
    }
  }
}
