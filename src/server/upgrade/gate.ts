/**
 * The endpoint's side of the SSE→WebSocket upgrade: which requests may proceed while a
 * session is switching, and the decision on a WebSocket handshake request.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { UPGRADE_TOKEN_HEADER, WS_SUBPROTOCOL } from '../../protocol/headers.js';
import type { SocketPort } from '../stream/event-sink.js';
import type { UpgradeAction, UpgradeInput, UpgradeState } from './state.js';

/** What the gate needs of a session that may switch to WebSocket. */
export interface Upgradable {
  readonly upgradeState: UpgradeState;
  handshakeInput(token: string | null): UpgradeInput;
  upgradeInput(input: UpgradeInput): Promise<UpgradeAction>;
  adoptSocket(port: SocketPort): void;
}

/** What to do with a WebSocket upgrade request. */
export type UpgradeDecision =
  { readonly ok: false; readonly response: Response } | { readonly ok: true; readonly protocol: string; attach(port: SocketPort): Promise<void> };

/** Turns an upgrade action into a refusal, or returns for `proceed`. */
export function proceedOrRefuse(action: UpgradeAction): void {
  if (action === 'proceed') return;
  if (action === 'refuse-pending') throw new ContinuityError('upgrade-pending');
  throw new ContinuityError('session-superseded');
}

/** Checks that a handshake request offers our subprotocol. */
export function checkSubprotocol(request: Request): void {
  const protocols = (request.headers.get('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim());
  if (!protocols.includes(WS_SUBPROTOCOL)) throw new ContinuityError('upgrade-invalid', `Sec-WebSocket-Protocol must offer ${WS_SUBPROTOCOL}`);
}

/** The handshake of `session`: refused (the session ends) or accepted once the 101 is written. */
export async function decideHandshake(session: Upgradable, request: Request): Promise<UpgradeDecision> {
  const input = session.handshakeInput(request.headers.get(UPGRADE_TOKEN_HEADER));
  if (input !== 'handshake' || session.upgradeState !== 'upgrade-pending') {
    // A wrong or expired token, a second handshake, or one without an offer: the session ends.
    proceedOrRefuse(await session.upgradeInput(input));
  }
  return {
    ok: true,
    protocol: WS_SUBPROTOCOL,
    async attach(port) {
      // The 101 is written: this is the moment the session moves (or, for a second
      // socket racing the first, is superseded and both sockets close).
      const action = await session.upgradeInput('handshake');
      if (action === 'accept') session.adoptSocket(port);
      else port.close(1008, 'session-superseded');
    },
  };
}
