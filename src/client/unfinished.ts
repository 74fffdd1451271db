/**
 * The requests a client has sent and not yet seen answered, kept in the checkpoint so that a
 * process restored from it can list what its predecessor left unfinished. The transport
 * never re-sends them: whether the server ran them is unknown, and only the application
 * can say whether a call may run twice. Pure: no I/O.
 */
import type { JsonRpcMessage, RequestId } from '../protocol/jsonrpc.js';
import { isRecord, isText } from './shape.js';

/** A request that was in flight when the checkpoint was written. */
export interface UnfinishedRequest {
  /** The JSON-RPC id it was sent with (the SDK's; a new process numbers its own from scratch). */
  id: RequestId;
  /** `tools/call`, `resources/read`, … */
  method: string;
  /** When it was sent (ms since the epoch). */
  sentAt: number;
  /** Its params, when their JSON is at most {@link MAX_UNFINISHED_PARAMS_BYTES}; omitted when larger. */
  params?: Record<string, unknown> | undefined;
}

/** Unfinished requests a checkpoint keeps at most: the oldest beyond it are dropped. */
export const MAX_UNFINISHED = 64;
/** Largest params (as JSON) an unfinished request keeps: enough for a tool name and its arguments. */
export const MAX_UNFINISHED_PARAMS_BYTES = 4096;

/** What is wrong with `value` as a list of {@link UnfinishedRequest}, or undefined if nothing. */
export function unfinishedProblem(value: unknown): string | undefined {
  const bad = !Array.isArray(value) || value.length > MAX_UNFINISHED || !value.every(isUnfinished);
  return bad ? 'inFlight' : undefined;
}

/** Is `r` a well-formed {@link UnfinishedRequest}? */
function isUnfinished(r: Partial<UnfinishedRequest> | null): boolean {
  return (
    typeof r === 'object' &&
    r !== null &&
    (isText(r.id, 1024) || Number.isSafeInteger(r.id)) &&
    isText(r.method, 1024) &&
    r.method.length > 0 &&
    Number.isFinite(r.sentAt) &&
    (r.params === undefined || fitParams(r.params))
  );
}

/** Unfinished requests read at most from a checkpoint that is refused: more than a valid one holds, still bounded. */
export const MAX_SALVAGED = 4 * MAX_UNFINISHED;

/**
 * The well-formed entries of what a refused checkpoint says was in flight (`inFlight`, read
 * from already parsed JSON), the first {@link MAX_SALVAGED}: what the application can still
 * reconcile. Malformed entries are skipped; anything that is not a list gives none.
 */
export function salvageUnfinished(value: unknown): UnfinishedRequest[] {
  if (!Array.isArray(value)) return [];
  const out: UnfinishedRequest[] = [];
  for (const r of value as Array<Partial<UnfinishedRequest> | null>) {
    if (out.length >= MAX_SALVAGED) break;
    if (!isUnfinished(r)) continue;
    const { id, method, sentAt, params } = r as UnfinishedRequest;
    out.push(params === undefined ? { id, method, sentAt } : { id, method, sentAt, params: structuredClone(params) });
  }
  return out;
}

function fitParams(params: unknown): params is Record<string, unknown> {
  try {
    return isRecord(params) && JSON.stringify(params).length <= MAX_UNFINISHED_PARAMS_BYTES;
  } catch {
    return false; // cycles, BigInt: not something a checkpoint can hold
  }
}

/** The id of a response, as a map key; undefined for anything else. */
function answered(message: JsonRpcMessage): string | undefined {
  return 'method' in message || message.id === undefined || message.id === null ? undefined : JSON.stringify(message.id);
}

/** The request a `notifications/cancelled` names, as a map key. */
function cancelled(message: JsonRpcMessage): string | undefined {
  const id = 'method' in message && message.method === 'notifications/cancelled' ? message.params?.requestId : undefined;
  return id === undefined ? undefined : JSON.stringify(id);
}

/** The requests sent and not yet answered (nor cancelled), oldest first, at most {@link MAX_UNFINISHED}. */
export class OutstandingRequests {
  readonly #open = new Map<string, UnfinishedRequest>();

  /**
   * Notes a message the client sends: a request opens, a `notifications/cancelled` closes
   * the one it names. True when the list changed.
   */
  sent(message: JsonRpcMessage, now = Date.now()): boolean {
    if (!('method' in message && 'id' in message)) return this.#open.delete(cancelled(message) as string);
    const { id, method, params } = message;
    this.#open.set(JSON.stringify(id), fitParams(params) ? { id, method, sentAt: now, params } : { id, method, sentAt: now });
    // Bounded: an application that never awaits its calls must not grow the checkpoint.
    if (this.#open.size > MAX_UNFINISHED) this.#open.delete(this.#open.keys().next().value as string);
    return true;
  }

  /** Notes a message handed to the application: a response closes its request. True when the list changed. */
  received(message: JsonRpcMessage): boolean {
    return this.#open.delete(answered(message) as string);
  }

  /** A copy of the open requests, oldest first. */
  list(): UnfinishedRequest[] {
    return structuredClone([...this.#open.values()]);
  }
}

const PREFIX = 'mcp-continuity/restored/';

/**
 * After a restore, the new `Client` numbers its requests from scratch, so one may carry the id
 * of a request the server is still running for the old process, and be refused as a
 * duplicate. Such a request goes out under an id of ours and is answered under its own.
 */
export class RestoredIds {
  /** Ids (as JSON) of the unfinished requests. */
  readonly #taken: ReadonlySet<string>;
  /** The Client's id (as JSON) → ours on the wire, and ours → the Client's. */
  readonly #wire = new Map<string, string>();
  readonly #client = new Map<string, RequestId>();
  #counter = 0;

  constructor(unfinished: readonly UnfinishedRequest[]) {
    this.#taken = new Set(unfinished.map((r) => JSON.stringify(r.id)));
  }

  /** `message` as sent: a request with a taken id gets one of ours, a cancellation follows it. */
  outgoing(message: JsonRpcMessage): JsonRpcMessage {
    if (!('method' in message)) return message;
    if ('id' in message) {
      const key = JSON.stringify(message.id);
      if (!this.#taken.has(key)) return message;
      const id = PREFIX + ++this.#counter;
      this.#wire.set(key, id);
      this.#client.set(id, message.id);
      return { ...message, id };
    }
    const requestId = this.#wire.get(cancelled(message) as string);
    return requestId === undefined ? message : { ...message, params: { ...message.params, requestId } };
  }

  /** `message` as the Client must see it: an answer to one of our ids carries the Client's again. */
  incoming(message: JsonRpcMessage): JsonRpcMessage {
    const wire = 'method' in message ? undefined : message.id;
    const id = typeof wire === 'string' ? this.#client.get(wire) : undefined;
    if (id === undefined) return message;
    this.#client.delete(wire as string);
    this.#wire.delete(JSON.stringify(id));
    return { ...message, id };
  }
}
