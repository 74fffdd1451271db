/**
 * A session's side of the SSE→WebSocket upgrade: when an offer may be made, the offer on
 * the standalone stream, the state machine's inputs, and the socket taking the session over.
 */
import { UPGRADE_ACCEPTED, UPGRADE_REQUEST_HEADER, WS_SUBPROTOCOL } from '../../protocol/headers.js';
import { isRequest, type JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { SocketPort } from '../stream/event-sink.js';
import type { StreamHost } from '../stream/host.js';
import { sseHeaders } from '../stream/http.js';
import type { ReaderBounds } from '../stream/bounded-writer.js';
import type { OutboundStream } from '../stream/outbound-stream.js';
import type { Upgradable } from '../upgrade/gate.js';
import { SessionSocket } from '../upgrade/socket.js';
import type { UpgradeAction, UpgradeInput, UpgradeState } from '../upgrade/state.js';
import { idKey, type RequestTable } from './request-table.js';
import type { SessionStreams } from './streams.js';

/** What the upgrade needs of its session. */
export interface UpgradingSession extends StreamHost {
  touch(): void;
  terminate(): Promise<void>;
}

/** The session's other parts the upgrade works with. */
export interface UpgradeParts {
  readonly streams: SessionStreams;
  readonly requests: RequestTable;
  /** Each reader's bounds (the socket is one reader). */
  readonly bounds: ReaderBounds;
  /** Hands a message that came over the socket to the SDK server. */
  receive(message: JsonRpcMessage): void;
  report(error: unknown): void;
}

export class SessionUpgrade implements Upgradable {
  readonly socket = new SessionSocket();
  readonly #session: UpgradingSession;
  readonly #parts: UpgradeParts;
  readonly #report: (error: unknown) => void;

  constructor(session: UpgradingSession, parts: UpgradeParts) {
    this.#session = session;
    this.#parts = parts;
    this.#report = (error) => parts.report(error);
  }

  get upgradeState(): UpgradeState {
    return this.socket.state;
  }

  /**
   * An upgrade is offered only to a quiet session: no request is answered on an SSE stream.
   * A request stream that owes nothing more counts as quiet while its close is still being
   * written to the store (with a remote store that can outlast the client's next request).
   */
  get canOfferUpgrade(): boolean {
    return this.socket.state === 'sse-active' && this.#parts.requests.size === 0 && this.#parts.streams.answeredAll;
  }

  /** Feeds the upgrade state machine; a `supersede` action ends the session. */
  async upgradeInput(input: UpgradeInput): Promise<UpgradeAction> {
    const { action } = this.socket.apply(input);
    if (action === 'supersede') await this.#session.terminate();
    return action;
  }

  /**
   * The offer (state already `upgrade-pending`): `upgrade-accepted` goes into the log
   * before it is written to the standalone stream; from now on every outbound message
   * goes to the socket's stream. The offer expires after `expiresInMs`.
   */
  async offerUpgrade(expiresInMs: number): Promise<Response> {
    const session = this.#session;
    session.touch();
    const token = await this.socket.offer(session, expiresInMs, () => void this.upgradeInput('timeout').catch(this.#report));
    const sink = this.#parts.streams.newSink({ counted: false });
    const { standalone } = this.#parts.streams;
    void standalone.attach(sink, standalone.deliveredSeq);
    const offer = { jsonrpc: '2.0', method: UPGRADE_ACCEPTED, params: { token, subprotocol: WS_SUBPROTOCOL, expiresInMs } };
    await standalone.append(JSON.stringify(offer), undefined, { durable: true });
    // The header says "an offer follows" before the body does, so the client can hold its
    // requests until the socket is open instead of racing the switch.
    return new Response(sink.body, { status: 200, headers: { ...sseHeaders(session.sessionId, session.epoch), [UPGRADE_REQUEST_HEADER]: 'websocket' } });
  }

  /** Which handshake input a presented token is. */
  handshakeInput(token: string | null): UpgradeInput {
    return this.socket.handshakeInput(token, this.#session.now());
  }

  /**
   * The handshake completed (101 written): the SSE stream ends, JSON-RPC flows both ways
   * on the socket, starting with whatever was logged while the upgrade was pending.
   */
  adoptSocket(port: SocketPort): void {
    this.#parts.streams.standalone.detach();
    this.socket.adopt(
      port,
      this.#parts.bounds,
      (message) => {
        this.#session.touch();
        // Admitted like a POST's requests (in-flight bound, no duplicate ids); a refusal goes back on the socket.
        if (isRequest(message)) this.#parts.requests.admitOn([idKey(message.id)], this.socket.stream as OutboundStream);
        this.#parts.receive(message);
      },
      () => void this.upgradeInput('ws-closed').catch(this.#report),
      this.#report,
    );
  }
}
