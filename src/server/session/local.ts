/**
 * A session held in this process, as a request finds it: every request passes the upgrade
 * gate first (docs/design.md §4), and a write refused because another replica took the
 * session over becomes {@link SessionMoved}, so the request is placed again (nothing of
 * it ran: the refused write comes before the SDK server sees a message).
 */
import { ContinuityError } from '../../protocol/errors.js';
import { isRequest, type JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { SessionRecord } from '../../store/types.js';
import { decideHandshake, proceedOrRefuse, type UpgradeDecision } from '../upgrade/gate.js';
import type { HandleContext } from './context.js';
import { SessionMoved, type PlacedSession, type UpgradeOffer } from './placed.js';
import { isFenced } from './post.js';
import type { Session } from './session.js';

/**
 * A draining process finishes the calls it runs but takes no new ones, else calls back to
 * back would keep its sessions (and its drain) forever: a new call is refused before it
 * runs, retryable, and goes to another replica once the session is let go. Notifications
 * and answers still pass: they belong to calls running here.
 */
export function refuseNewCalls(messages: readonly JsonRpcMessage[], draining: boolean): void {
  if (draining && messages.some(isRequest)) {
    throw new ContinuityError('server-draining', 'This replica is draining: it finishes its calls in flight but takes no new ones; retry shortly');
  }
}

export class LocalSession implements PlacedSession {
  readonly session: Session;
  readonly #onFenced: (session: Session) => Promise<void>;
  readonly #draining: () => boolean;

  /** `onFenced`: lets the session go (another replica owns it now). `draining`: this process takes no new calls. */
  constructor(session: Session, onFenced: (session: Session) => Promise<void>, draining: () => boolean = () => false) {
    this.session = session;
    this.#onFenced = onFenced;
    this.#draining = draining;
  }

  get record(): SessionRecord {
    return this.session.record;
  }
  get sessionId(): string {
    return this.session.sessionId;
  }
  get epoch(): string {
    return this.session.epoch;
  }
  get terminated(): boolean {
    return this.session.terminated;
  }

  async post(messages: JsonRpcMessage[], request: Request, context: HandleContext, batch: boolean): Promise<Response> {
    refuseNewCalls(messages, this.#draining());
    proceedOrRefuse(await this.session.upgrade.upgradeInput('post'));
    try {
      return await this.session.post(messages, request, context, batch);
    } catch (error) {
      if (!isFenced(error)) throw error;
      await this.#onFenced(this.session);
      throw new SessionMoved(undefined);
    }
  }

  async resume(lastEventId: string): Promise<Response> {
    proceedOrRefuse(await this.session.upgrade.upgradeInput('resume'));
    return this.session.resume(lastEventId);
  }

  async openStandalone(offer: UpgradeOffer | undefined): Promise<Response> {
    const session = this.session;
    if (offer && session.upgrade.canOfferUpgrade) {
      const action = await session.upgrade.upgradeInput('offer');
      if (action === 'offer') return session.upgrade.offerUpgrade(offer.expiresInMs);
      proceedOrRefuse(action);
    }
    proceedOrRefuse(await session.upgrade.upgradeInput('standalone'));
    return session.openStandalone();
  }

  delete(): Promise<void> {
    return this.session.terminate();
  }

  handshake(request: Request): Promise<UpgradeDecision> {
    return decideHandshake(this.session.upgrade, request);
  }

  resetLog(): Promise<void> {
    return this.session.resetLog();
  }
}
