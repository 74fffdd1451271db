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
import { proceedOrRefuse } from '../upgrade/gate.js';

export interface OwnerSide {
  readonly cluster: Cluster;
  held(id: string): Session | undefined;
  /** This replica was fenced off the session: drop it without writing. */
  lost(session: Session): Promise<void>;
}

const NOT_OURS: CarriedReply = { ok: false, code: 'store-fenced', message: 'This replica does not own the session' };

/** Serves one carried message. A `store-fenced` reply tells the sender that nothing of it ran. */
export async function serveCarried(owner: OwnerSide, message: Carried): Promise<CarriedReply> {
  const session = owner.held(message.session);
  if (!session || session.terminated) return NOT_OURS;
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
  proceedOrRefuse(await session.upgrade.upgradeInput('post'));
  const request = new Request(message.url, { method: 'POST', headers: message.headers });
  const extra = messageExtra(request, message.authInfo, () => {});
  try {
    return { ok: true, accepted: await session.accept(message.messages, extra, message.batch) };
  } catch (error) {
    if (!isFenced(error)) throw error;
    // Refused before the SDK server saw a message: nothing ran.
    await owner.lost(session);
    return { ok: false, code: 'store-fenced', message: error instanceof ContinuityError ? error.message : 'fenced' };
  }
}
