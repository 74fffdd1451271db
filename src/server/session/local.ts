/**
 * A session held in this process, as a request finds it: every request passes the upgrade
 * gate first (docs/design.md §4), and a write refused because another replica took the
 * session over becomes {@link SessionMoved}, so the request is placed again (nothing of
 * it ran: the refused write comes before the SDK server sees a message).
 */
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { SessionRecord } from '../../store/types.js';
import { decideHandshake, proceedOrRefuse, type UpgradeDecision } from '../upgrade/gate.js';
import type { HandleContext } from './context.js';
import { SessionMoved, type PlacedSession, type UpgradeOffer } from './placed.js';
import { isFenced } from './post.js';
import type { Session } from './session.js';

export class LocalSession implements PlacedSession {
  readonly session: Session;
  readonly #onFenced: (session: Session) => Promise<void>;

  /** `onFenced`: lets the session go (another replica owns it now). */
  constructor(session: Session, onFenced: (session: Session) => Promise<void>) {
    this.session = session;
    this.#onFenced = onFenced;
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
