/**
 * The client's side of the session: one immutable handle (ID, protocol version, epoch, the
 * initialize exchange) replaced whole whenever the session changes, so no reader ever sees
 * the ID of one session with the epoch of another; and what the session has open (requests
 * in flight, a restore in progress). Pure: no I/O.
 */
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/jsonrpc.js';
import type { SessionSnapshot } from './positions.js';
import type { Restored } from './restore.js';
import type { StreamCheckpoint } from './verdicts.js';
import { OutstandingRequests, RestoredIds, type UnfinishedRequest } from './unfinished.js';

/** Who the client is talking to. Never mutated: a change is a new handle. */
export interface SessionHandle {
  /** Undefined before initialize, after the session was lost, and for a server without sessions. */
  readonly id: string | undefined;
  /** Negotiated at initialize (sent back as `MCP-Protocol-Version`). */
  readonly protocolVersion: string | undefined;
  /** `X-MCP-Replay-Epoch` last seen, or null if the server sends none. */
  readonly epoch: string | null;
  /** The initialize request that opened it: a lost session is re-initialized with it. */
  readonly init: JsonRpcRequest | undefined;
  /** The server's answer to initialize (capabilities, serverInfo, instructions). */
  readonly initResult: Record<string, unknown> | undefined;
}

const NONE: SessionHandle = Object.freeze({ id: undefined, protocolVersion: undefined, epoch: null, init: undefined, initResult: undefined });

export class ClientSession {
  #handle = NONE;
  /** Id (as JSON) of the SDK's initialize while its answer is awaited. */
  #initKey: string | undefined;
  /**
   * Restored from a checkpoint with the server's initialize result: the ID stays hidden
   * until the SDK `Client` has sent its initialize (`initialize`), answered from the stored
   * result; its `notifications/initialized` is then swallowed (`initialized`). The server
   * already has both from the first process.
   */
  #restoring: 'initialize' | 'initialized' | undefined;
  readonly #outstanding = new OutstandingRequests();
  #ids = new RestoredIds([]);
  #unfinished: readonly UnfinishedRequest[] = [];

  get handle(): SessionHandle {
    return this.#handle;
  }

  /** Replaces the handle in one step. */
  swap(change: Partial<SessionHandle>): SessionHandle {
    this.#handle = Object.freeze({ ...this.#handle, ...change });
    return this.#handle;
  }

  /** The session is gone: its ID and epoch go, what the client negotiated stays for the next. */
  forget(): void {
    this.swap({ id: undefined, epoch: null });
  }

  /** The ID the SDK may see: none while a restore waits for the SDK's initialize. */
  get visibleId(): string | undefined {
    return this.#restoring === 'initialize' ? undefined : this.#handle.id;
  }

  get unfinished(): readonly UnfinishedRequest[] {
    return this.#unfinished;
  }

  /** What the checkpoint saves of the session, with the standalone stream's position. */
  snapshot(standalone: StreamCheckpoint | undefined): SessionSnapshot {
    const s = this.#handle;
    return {
      sessionId: s.id,
      protocolVersion: s.protocolVersion,
      epoch: s.epoch,
      initialize: s.init && JSON.stringify(s.init),
      initializeResult: s.initResult && JSON.stringify(s.initResult),
      standalone,
      inFlight: this.inFlight(),
    };
  }

  /** Requests sent and not yet answered, for the checkpoint. */
  inFlight(): UnfinishedRequest[] {
    return this.#outstanding.list();
  }

  /**
   * The restored session is unknown to the server: it is dropped, and the SDK's initialize
   * goes to the server (a new session, whose answer the SDK sees). The unfinished list stays.
   */
  dropRestored(): void {
    this.#handle = NONE;
    this.#restoring = undefined;
  }

  restore({ checkpoint, init, initResult }: Restored): void {
    this.swap({ id: checkpoint.sessionId, protocolVersion: checkpoint.protocolVersion, epoch: checkpoint.epoch, init, initResult });
    if (initResult) this.#restoring = 'initialize';
    this.#unfinished = Object.freeze(checkpoint.inFlight ?? []);
    this.#ids = new RestoredIds(this.#unfinished);
  }

  /**
   * While restoring: answers the SDK's initialize from the checkpoint (through `answer`,
   * after send returns, as a server's answer would come), then swallows its
   * `notifications/initialized`; true when `message` was handled here. Anything else ends
   * the restore (a caller that does not initialize sees the session as restored).
   */
  answerLocally(message: JsonRpcMessage, answer: (message: JsonRpcMessage) => void): boolean {
    const phase = this.#restoring;
    if (phase === undefined) return false;
    this.#restoring = undefined;
    const result = this.#handle.initResult;
    if (phase === 'initialize' && 'method' in message && message.method === 'initialize' && 'id' in message && result) {
      this.#restoring = 'initialized';
      const reply: JsonRpcMessage = { jsonrpc: '2.0', id: message.id, result: structuredClone(result) };
      queueMicrotask(() => answer(reply));
      return true;
    }
    return phase === 'initialized' && 'method' in message && message.method === 'notifications/initialized' && !('id' in message);
  }

  /** Notes a message the SDK sends; returns it as it goes on the wire, and whether what is open changed. */
  sent(message: JsonRpcMessage): { wire: JsonRpcMessage; changed: boolean } {
    if ('method' in message && message.method === 'initialize' && 'id' in message) {
      this.swap({ init: message });
      this.#initKey = JSON.stringify(message.id);
    }
    const changed = this.#outstanding.sent(message);
    return { wire: this.#ids.outgoing(message), changed };
  }

  /**
   * Notes a message for the SDK; returns it as the SDK must see it, whether what is open
   * changed, and whether it answered the SDK's initialize (adopting the version and result).
   */
  received(message: JsonRpcMessage): { message: JsonRpcMessage; changed: boolean; initialized: boolean } {
    const own = this.#ids.incoming(message);
    const changed = this.#outstanding.received(own);
    const initialized = this.#initKey !== undefined && !('method' in own) && 'id' in own && JSON.stringify(own.id) === this.#initKey;
    if (initialized) {
      this.#initKey = undefined;
      if ('result' in own && typeof own.result.protocolVersion === 'string') this.swap({ protocolVersion: own.result.protocolVersion, initResult: own.result });
    }
    return { message: own, changed, initialized };
  }
}
