/**
 * The one interface of a session, wherever it runs: held in this process, or owned by
 * another replica and served from here. The endpoint routes requests to it and never asks
 * which kind it has; placement decides which kind a request gets.
 */
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { SessionRecord } from '../../store/types.js';
import type { UpgradeDecision } from '../upgrade/gate.js';
import type { HandleContext } from './context.js';

/** A standalone GET that asked for the SSE→WebSocket upgrade, and the endpoint may offer it. */
export interface UpgradeOffer {
  readonly expiresInMs: number;
}

/** A session as a request finds it. Every method applies the session's lifecycle (upgrade gate, termination). */
export interface PlacedSession {
  readonly record: SessionRecord;
  readonly sessionId: string;
  readonly epoch: string;
  readonly terminated: boolean;
  /** The messages of one POST (validated, not an initialize). */
  post(messages: JsonRpcMessage[], request: Request, context: HandleContext, batch: boolean): Promise<Response>;
  /** `GET` with `Last-Event-ID`. */
  resume(lastEventId: string): Promise<Response>;
  /** `GET` without `Last-Event-ID`; `offer` when the request asked for an upgrade the endpoint allows. */
  openStandalone(offer: UpgradeOffer | undefined): Promise<Response>;
  /** `DELETE`: the session ends on every replica. */
  delete(): Promise<void>;
  /** A WebSocket handshake request. */
  handshake(request: Request): Promise<UpgradeDecision>;
  /** Starts a new generation of the event log. */
  resetLog(): Promise<void>;
}

/**
 * Thrown by a session when the request must be placed again: this replica was fenced off,
 * or the owner it was carried to did not take it (not listening, or said it is not the
 * owner). It is thrown only when the request certainly did not run, so placing it again
 * can never run it twice.
 */
export class SessionMoved extends Error {
  /** The replica that was asked and did not take the request (undefined: this one, fenced). */
  readonly owner: string | undefined;

  constructor(owner: string | undefined) {
    super('The session moved');
    this.name = 'SessionMoved';
    this.owner = owner;
  }
}
