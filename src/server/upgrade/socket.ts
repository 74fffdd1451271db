/**
 * A session's WebSocket half: the upgrade state, the offer's token and timer, and the
 * stream (`_ws`) that carries every outbound message from the offer on, written to the
 * socket once the handshake completes. The session decides; this holds and applies.
 */
import { randomToken } from '../../protocol/crypto.js';
import { ContinuityError } from '../../protocol/errors.js';
import { classify, errorResponse, type JsonRpcMessage } from '../../protocol/jsonrpc.js';
import { SocketSink, type SocketBounds, type SocketPort } from '../stream/event-sink.js';
import { OutboundStream, type StreamHost } from '../stream/outbound-stream.js';
import { SOCKET_STREAM } from '../stream/names.js';
import { transition, type Transition, type UpgradeInput, type UpgradeState } from './state.js';

export class SessionSocket {
  #state: UpgradeState = 'sse-active';
  #token: string | undefined;
  #expiresAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stream: OutboundStream | undefined;

  get state(): UpgradeState {
    return this.#state;
  }

  /** The socket's stream, once an offer was made: then every outbound message goes there. */
  get stream(): OutboundStream | undefined {
    return this.#stream;
  }

  /** Moves the state machine. */
  apply(input: UpgradeInput): Transition {
    const t = transition(this.#state, input);
    this.#state = t.state;
    return t;
  }

  /** Prepares an offer: token, expiry timer, and the socket's stream in the log. */
  async offer(host: StreamHost, expiresInMs: number, onTimeout: () => void): Promise<string> {
    this.#token = randomToken(24);
    this.#expiresAt = host.now() + expiresInMs;
    this.#stream = await OutboundStream.open(host, SOCKET_STREAM, { kind: 'standalone', requestIds: [] });
    this.#timer = setTimeout(onTimeout, expiresInMs);
    this.#timer.unref?.();
    return this.#token;
  }

  /** Which handshake input a presented token is. */
  handshakeInput(token: string | null, now: number): UpgradeInput {
    if (this.#token === undefined || token === null || !timingSafeEqualText(token, this.#token)) return 'bad-token';
    if (now > this.#expiresAt) return 'expired-token';
    return 'handshake';
  }

  /** The handshake completed: the socket gets what was logged since the offer, then live messages. */
  adopt(port: SocketPort, bounds: SocketBounds, onMessage: (message: JsonRpcMessage) => void, onClosed: () => void, report: (e: unknown) => void): void {
    if (this.#timer) clearTimeout(this.#timer);
    const stream = this.#stream as OutboundStream;
    void stream.attach(new SocketSink(port, bounds), 0);
    port.onMessage((text) => {
      let message: JsonRpcMessage;
      try {
        message = JSON.parse(text) as JsonRpcMessage;
        classify(message);
      } catch (error) {
        const refusal = error instanceof ContinuityError ? error : new ContinuityError('parse-error');
        void stream.append(JSON.stringify(errorResponse(null, refusal))).catch(report);
        return;
      }
      try {
        onMessage(message);
      } catch (error) {
        // Refused at admission (in-flight bound, duplicate id): answered like a refused POST.
        const id = 'id' in message && message.id !== undefined && 'method' in message ? message.id : null;
        const refusal = error instanceof ContinuityError ? error : new ContinuityError('internal-error');
        void stream.append(JSON.stringify(errorResponse(id, refusal))).catch(report);
      }
    });
    port.onClose(onClosed);
  }

  /** Stops the timer and closes the socket, if any. */
  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#stream?.detach();
  }
}

/** Compares two tokens in time independent of where they differ. */
function timingSafeEqualText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
