/**
 * The client's half of the upgrade, as state: the gate that holds sends while the GET that
 * asked for an offer is unanswered, the handshake under way, the open socket, and the
 * requests sent over it that still owe an answer.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';
import { openSocket } from '#client-socket';
import { isUpgradeOffer, type SocketChannel, type SocketHandlers } from './socket-offer.js';

export interface UpgradeHost {
  readonly url: URL;
  headers(extra: Record<string, string>): Headers;
  /** The socket is gone, refused or failed: the session is over (superseded). */
  lost(error: ContinuityError): void;
  deliver(message: JsonRpcMessage): void;
  report(error: Error): void;
}

/** The client's half of the upgrade as the transport uses it (a browser build has one that never upgrades). */
export interface Upgrade {
  /** Can this runtime upgrade at all? */
  readonly supported: boolean;
  readonly open: boolean;
  readonly waitFor: Promise<void> | undefined;
  trySend(message: JsonRpcMessage): boolean;
  answered(message: JsonRpcMessage): void;
  closeGate(): void;
  openGate(): void;
  follow(params: unknown, host: UpgradeHost, maxFrameBytes: number): boolean;
  fail(error: ContinuityError, emit: (message: JsonRpcMessage) => void): number;
  close(): void;
}

export class ClientUpgrade implements Upgrade {
  readonly supported = true;
  #socket: SocketChannel | undefined;
  #upgrading: Promise<void> | undefined;
  #gate: { promise: Promise<void>; open: () => void } | undefined;
  /** Requests sent over the socket and not yet answered (key → id). */
  readonly #pending = new Map<string, RequestId>();

  /** Is the session carried over the socket? */
  get open(): boolean {
    return this.#socket !== undefined;
  }

  /** What a send must wait for first, if anything. */
  get waitFor(): Promise<void> | undefined {
    return this.#gate?.promise ?? this.#upgrading;
  }

  /** Sends over the socket if one is open; false if not. */
  trySend(message: JsonRpcMessage): boolean {
    if (!this.#socket) return false;
    if ('method' in message && 'id' in message) this.#pending.set(JSON.stringify(message.id), message.id);
    this.#socket.send(message);
    return true;
  }

  /** A message arrived: a response settles what it answers. */
  answered(message: JsonRpcMessage): void {
    if (!('method' in message) && 'id' in message && message.id !== null && message.id !== undefined) this.#pending.delete(JSON.stringify(message.id));
  }

  /** Holds sends until the asking GET is answered (or the upgrade is under way). */
  closeGate(): void {
    if (this.#gate) return;
    let open!: () => void;
    const promise = new Promise<void>((resolve) => (open = resolve));
    this.#gate = { promise, open };
  }

  openGate(): void {
    const gate = this.#gate;
    this.#gate = undefined;
    gate?.open();
  }

  /**
   * Follows an offer: opens the socket; sends wait for it. A refused or failed handshake,
   * or a socket lost later, is reported to the host as the end of the session.
   */
  follow(params: unknown, host: UpgradeHost, maxFrameBytes: number): boolean {
    if (!isUpgradeOffer(params) || this.#upgrading || this.#socket) return false;
    const handlers: SocketHandlers = {
      onMessage: (m) => host.deliver(m),
      onLost: (error) => {
        this.#socket = undefined;
        host.lost(error);
      },
      onError: (error) => host.report(error),
    };
    this.#upgrading = (async () => {
      try {
        this.#socket = await openSocket(host.url, host.headers({}), params, handlers, maxFrameBytes);
      } catch (error) {
        host.lost(error instanceof ContinuityError ? error : new ContinuityError('session-superseded', String(error)));
      }
    })().finally(() => {
      this.#upgrading = undefined;
    });
    // Sends held by the gate now wait on the handshake itself.
    this.openGate();
    return true;
  }

  /** Fails what the socket owes with `error` and closes it; returns how many failed. */
  fail(error: ContinuityError, emit: (message: JsonRpcMessage) => void): number {
    const owed = [...this.#pending.values()];
    this.#pending.clear();
    for (const id of owed) emit({ jsonrpc: '2.0', id, error: error.toJsonRpcError() });
    this.close();
    return owed.length;
  }

  close(): void {
    this.#socket?.close();
    this.#socket = undefined;
    this.openGate();
  }
}
