/**
 * The owner's side of the bus: a POST, DELETE or GET gate another replica carried here,
 * for a session this replica holds. It goes through the same session methods (and the
 * same upgrade gate) as a request that reached this replica directly.
 */
import { ContinuityError } from '../../protocol/errors.js';
import type { Cluster } from './cluster.js';
import type { Carried, CarriedReply } from './wire.js';
import type { Session } from '../session/session.js';
import { messageExtra } from '../session/transport.js';
import { isFenced } from '../session/post.js';
import { refuseNewCalls } from '../session/local.js';
import { proceedOrRefuse } from '../upgrade/gate.js';

export interface OwnerSide {
  readonly cluster: Cluster;
  held(id: string): Session | undefined;
  /** This replica was fenced off the session: drop it without writing. */
  lost(session: Session): Promise<void>;
  /** Settles when a rebuild of `id` under way here ends (undefined: none is). */
  settled(id: string): Promise<void> | undefined;
  /** This replica is draining: its sessions take no new calls. */
  draining(): boolean;
}

const NOT_OURS: CarriedReply = { ok: false, code: 'store-fenced', message: 'This replica does not own the session' };
const NOT_YET: CarriedReply = { ok: false, code: 'owner-unavailable', message: 'This replica is taking the session over; retry shortly' };

/**
 * Serves one carried message. A `store-fenced` reply tells the sender that nothing of it
 * ran; so do the retryable refusals (`server-draining`, `owner-unavailable`), which the
 * sender answers at once instead of waiting on a lease.
 */
export async function serveCarried(owner: OwnerSide, message: Carried): Promise<CarriedReply> {
  // A takeover under way here (the lease is ours, the session is being rebuilt): its end
  // is waited for, a quarter lease at most, so the message is served by the new owner, or
  // promptly refused as not accepted; never sent back to wait on a lease that is ours.
  const rebuilding = owner.held(message.session) ? undefined : owner.settled(message.session);
  if (rebuilding) await settledWithin(rebuilding, owner.cluster.leaseMs / 4);
  const session = owner.held(message.session);
  // Ours but not here yet (claimed, not yet rebuilt): retryable at once. Ending here: the
  // lease is released as it ends, so the sender places it again after a short wait.
  if (!session) return owner.cluster.holds(message.session) ? NOT_YET : NOT_OURS;
  if (session.terminated) return NOT_OURS;
  // Not ours by our own clock (a late renewal, a busy process): ours only if the lease still is, under our token.
  if (!owner.cluster.holds(message.session)) {
    const lease = await owner.cluster.claim(message.session);
    if (lease.owner !== owner.cluster.replicaId || lease.token !== session.fence) return NOT_OURS;
  }
  if (message.t === 'delete') {
    await session.terminate();
    return { ok: true, accepted: { kind: 'accepted' } };
  }
  if (message.t === 'open') {
    proceedOrRefuse(await session.upgrade.upgradeInput(message.input));
    const after = message.input === 'standalone' ? await session.primeStandalone() : undefined;
    return { ok: true, accepted: { kind: 'accepted' }, after };
  }
  refuseNewCalls(message.messages, owner.draining());
  proceedOrRefuse(await session.upgrade.upgradeInput('post'));
  const request = new Request(message.url, { method: 'POST', headers: message.headers });
  const extra = messageExtra(request, message.authInfo, () => {});
  try {
    return { ok: true, accepted: await session.accept(message.messages, extra, message.batch) };
  } catch (error) {
    // Let go while its stream was being opened (a drain, a passivation), before the SDK
    // server saw a message: nothing ran, and the sender places it again.
    if (error instanceof ContinuityError && error.code === 'session-not-found' && session.terminated) return NOT_OURS;
    if (!isFenced(error)) throw error;
    // Refused before the SDK server saw a message: nothing ran.
    await owner.lost(session);
    return { ok: false, code: 'store-fenced', message: error instanceof ContinuityError ? error.message : 'fenced' };
  }
}

async function settledWithin(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
