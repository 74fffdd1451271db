/**
 * The SSE→WebSocket upgrade of a session, as a pure state machine (docs/design.md §4).
 *
 *   sse-active ──offer──▶ upgrade-pending ──handshake──▶ upgraded
 *        │                     │  │                        │
 *        │            resume, bad/expired token,       resume, ws closed,
 *        │            second handshake, timeout        second handshake
 *        ▼                     ▼  ▼                        ▼
 *                         superseded (terminal)
 *
 * The refusal at its heart: once `upgrade-accepted` is durably in the log (pending) or the
 * handshake completed (upgraded), a `GET` with `Last-Event-ID` must not get an idle stream
 * (deadlock), a second `upgrade-accepted` (dual negotiation), or a replay as if no upgrade
 * happened. It ends the session with the non-retryable `session-superseded`.
 */

export type UpgradeState = 'sse-active' | 'upgrade-pending' | 'upgraded' | 'superseded';

export type UpgradeInput =
  /** The standalone GET asked for an upgrade (`X-MCP-Upgrade: websocket`) and the server allows it. */
  | 'offer'
  /** A WebSocket handshake with the right token before it expired. */
  | 'handshake'
  /** A WebSocket handshake with a wrong token. */
  | 'bad-token'
  /** A WebSocket handshake after the token expired. */
  | 'expired-token'
  /** The pending upgrade's timer ran out without a handshake. */
  | 'timeout'
  /** `GET` with `Last-Event-ID` (a resume). */
  | 'resume'
  /** `GET` without `Last-Event-ID` (a fresh standalone stream). */
  | 'standalone'
  /** A `POST`. */
  | 'post'
  /** The WebSocket closed (either side, any reason). */
  | 'ws-closed';

export type UpgradeAction =
  /** Proceed as the request asked (the ordinary SSE path). */
  | 'proceed'
  /** Append `upgrade-accepted` to the log, then send it; start the expiry timer. */
  | 'offer'
  /** Complete the handshake (write 101); the SSE stream ends; JSON-RPC moves to the socket. */
  | 'accept'
  /** Refuse this request with 409 `upgrade-pending`; the session stays (retryable). */
  | 'refuse-pending'
  /** Refuse with 410 `session-superseded` and terminate the session. */
  | 'supersede'
  /** Refuse with 410 `session-superseded`; the session is already over. */
  | 'refuse-superseded';

export interface Transition {
  readonly state: UpgradeState;
  readonly action: UpgradeAction;
}

const T = (state: UpgradeState, action: UpgradeAction): Transition => ({ state, action });

/** Every (state, input) pair, spelled out: no default branch can hide a missing case. */
const TABLE: Record<UpgradeState, Record<UpgradeInput, Transition>> = {
  'sse-active': {
    offer: T('upgrade-pending', 'offer'),
    // No upgrade was offered: a handshake has nothing to complete.
    handshake: T('superseded', 'supersede'),
    'bad-token': T('superseded', 'supersede'),
    'expired-token': T('superseded', 'supersede'),
    timeout: T('sse-active', 'proceed'), // a stale timer of an earlier state: nothing to do
    resume: T('sse-active', 'proceed'),
    standalone: T('sse-active', 'proceed'),
    post: T('sse-active', 'proceed'),
    'ws-closed': T('sse-active', 'proceed'),
  },
  'upgrade-pending': {
    // Dual negotiation is refused: the one offer stands until it completes or expires.
    offer: T('superseded', 'supersede'),
    handshake: T('upgraded', 'accept'),
    'bad-token': T('superseded', 'supersede'),
    'expired-token': T('superseded', 'supersede'),
    timeout: T('superseded', 'supersede'),
    // The refusal: (1) upgrade-accepted is durable ∧ (2) no Sec-WebSocket-Accept yet ∧ (3) a resume.
    resume: T('superseded', 'supersede'),
    standalone: T('superseded', 'supersede'),
    // The client is switching transports; a request now would have two homes.
    post: T('upgrade-pending', 'refuse-pending'),
    'ws-closed': T('upgrade-pending', 'proceed'),
  },
  upgraded: {
    offer: T('superseded', 'supersede'),
    handshake: T('superseded', 'supersede'),
    'bad-token': T('superseded', 'supersede'),
    'expired-token': T('superseded', 'supersede'),
    timeout: T('upgraded', 'proceed'),
    resume: T('superseded', 'supersede'),
    standalone: T('superseded', 'supersede'),
    // JSON-RPC now flows over the socket only: never two live transports.
    post: T('superseded', 'supersede'),
    'ws-closed': T('superseded', 'supersede'),
  },
  superseded: {
    offer: T('superseded', 'refuse-superseded'),
    handshake: T('superseded', 'refuse-superseded'),
    'bad-token': T('superseded', 'refuse-superseded'),
    'expired-token': T('superseded', 'refuse-superseded'),
    timeout: T('superseded', 'refuse-superseded'),
    resume: T('superseded', 'refuse-superseded'),
    standalone: T('superseded', 'refuse-superseded'),
    post: T('superseded', 'refuse-superseded'),
    'ws-closed': T('superseded', 'refuse-superseded'),
  },
};

export const UPGRADE_STATES: readonly UpgradeState[] = ['sse-active', 'upgrade-pending', 'upgraded', 'superseded'];
export const UPGRADE_INPUTS: readonly UpgradeInput[] = [
  'offer',
  'handshake',
  'bad-token',
  'expired-token',
  'timeout',
  'resume',
  'standalone',
  'post',
  'ws-closed',
];

/** The next state and what to do, for `input` in `state`. */
export function transition(state: UpgradeState, input: UpgradeInput): Transition {
  return TABLE[state][input];
}
