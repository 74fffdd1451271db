/**
 * The one error table shared by server, client and CLI.
 *
 * Every refusal has a stable string `code` (also sent as `error.data.reason` on the
 * wire), an HTTP status, a JSON-RPC error code and a default message. Users match on
 * `err.code`; the wire carries the same string, so a client can map a refusal it
 * receives back to the same typed error.
 */

/** JSON-RPC error codes used on the wire. */
export const JsonRpcCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  InternalError: -32603,
  /** Generic server error of the Streamable HTTP transport (SDK convention). */
  ServerError: -32000,
  /** Session not found (spec convention for 404). */
  SessionNotFound: -32001,
  /** Continuity cannot be proven: the resume was refused. */
  ContinuityRefused: -32002,
  /** A request that can never complete (its process died, or its session ended). */
  RequestAbandoned: -32003,
} as const;

interface ErrorSpec {
  readonly status: number;
  readonly rpc: number;
  readonly message: string;
  /** May the same request be retried unchanged (after a delay)? */
  readonly retryable: boolean;
  /** Fields `error.data` may carry beside `reason`, for the docs. */
  readonly data?: string;
}

/** The table. Keys are the public codes. */
export const ERRORS = {
  // Sessions
  'session-not-found': { status: 404, rpc: JsonRpcCode.SessionNotFound, message: 'Session not found', retryable: false },
  'session-required': { status: 400, rpc: JsonRpcCode.ServerError, message: 'Bad Request: Mcp-Session-Id header is required', retryable: false },
  'session-limit': { status: 503, rpc: JsonRpcCode.ServerError, message: 'Too many sessions', retryable: true },
  'in-flight-limit': { status: 429, rpc: JsonRpcCode.ServerError, message: 'Too many requests in flight for this session', retryable: true },
  'duplicate-request-id': { status: 400, rpc: JsonRpcCode.InvalidRequest, message: 'A request with this id is already in flight', retryable: false },
  'upgrade-pending': {
    status: 409,
    rpc: JsonRpcCode.ServerError,
    message: 'The session is switching to WebSocket; send this over the socket once it is open',
    retryable: true,
  },
  'upgrade-invalid': { status: 400, rpc: JsonRpcCode.ServerError, message: 'Bad WebSocket upgrade request', retryable: false },
  'session-not-rebuildable': {
    status: 404,
    rpc: JsonRpcCode.SessionNotFound,
    message: 'Session ended: it lost its server and this server declares that its sessions cannot be rebuilt; re-initialize',
    retryable: false,
  },
  'session-state-limit': {
    status: 400,
    rpc: JsonRpcCode.InvalidRequest,
    message: 'Too much lasting session state (log level, subscriptions, application state) for this session',
    retryable: false,
  },
  'server-draining': {
    status: 503,
    rpc: JsonRpcCode.ServerError,
    message: 'Server draining for a restart: it takes no new sessions or calls; retry shortly',
    retryable: true,
  },
  'session-superseded': {
    status: 410,
    rpc: JsonRpcCode.ContinuityRefused,
    message: 'Session superseded by a WebSocket upgrade; start a new session',
    retryable: false,
  },

  // Resumption refusals (docs/design.md, "Resume")
  'cursor-invalid': {
    status: 400,
    rpc: JsonRpcCode.ContinuityRefused,
    message: 'Last-Event-ID is malformed or does not belong to this session',
    retryable: false,
  },
  'replay-epoch-mismatch': {
    status: 409,
    rpc: JsonRpcCode.ContinuityRefused,
    message: 'Replay epoch changed: the event log backing this cursor was reset',
    retryable: false,
  },
  'replay-window-exceeded': { status: 410, rpc: JsonRpcCode.ContinuityRefused, message: 'Cursor is older than the retained replay window', retryable: false },
  'cursor-ahead': {
    status: 409,
    rpc: JsonRpcCode.ContinuityRefused,
    message: 'Cursor is ahead of the event log: events the client saw are missing',
    retryable: false,
  },
  'request-abandoned': {
    status: 500,
    rpc: JsonRpcCode.RequestAbandoned,
    message: 'Request abandoned: it can never complete',
    retryable: false,
    data: "`mayHaveRun: true`: the request reached the process running its session before that process stopped, or stopped answering, so it may have run, in part or in full; the server never runs it again behind your back. The client transport reports it too, through `onerror` with `requestId`, for a request the application gave up (the SDK `Client`'s timeout or an abort) while an attempt to send it may have reached the server: its cancellation was sent, and it is never sent again",
  },

  // Client: a resume that cannot be proven continuous (each code is the verdict's kind).
  // 502: the server answered, but not with a continuation the client can prove.
  'session-invalid': { status: 502, rpc: JsonRpcCode.SessionNotFound, message: 'Session invalid on resume: re-initialize', retryable: false },
  'epoch-changed': { status: 502, rpc: JsonRpcCode.ContinuityRefused, message: 'Replay epoch changed on resume: the event log was reset', retryable: false },
  gap: { status: 502, rpc: JsonRpcCode.ContinuityRefused, message: 'Events were skipped: the stream has a gap', retryable: false },
  'replay-reset': { status: 502, rpc: JsonRpcCode.ContinuityRefused, message: 'The server restarted or rewrote the stream', retryable: false },
  'chain-mismatch': { status: 502, rpc: JsonRpcCode.ContinuityRefused, message: 'Event content does not continue the hash chain', retryable: false },
  'foreign-stream': { status: 502, rpc: JsonRpcCode.ContinuityRefused, message: 'Event belongs to another stream, epoch or ID scheme', retryable: false },
  undetectable: {
    status: 502,
    rpc: JsonRpcCode.ContinuityRefused,
    message: 'Continuity cannot be proven: event IDs carry no verifiable position',
    retryable: false,
  },
  'server-unreachable': {
    status: 503,
    rpc: JsonRpcCode.ServerError,
    message: 'The server could not be reached: the request was never written (connection refused); it may be sent again',
    retryable: true,
    data: '`attempts`; `outageMs`, how long it waited through the outage (at most `reconnect.maxOutageMs`); `requestId` when the application gave the request up before any server took it',
  },
  'stream-lost': { status: 502, rpc: JsonRpcCode.ContinuityRefused, message: 'The response stream was lost and cannot be resumed', retryable: false },
  'cors-refused': {
    status: 502,
    rpc: JsonRpcCode.ServerError,
    message: "The browser refused the cross-origin request: the server's CORS settings do not allow this origin, its methods or headers",
    retryable: false,
  },
  'checkpoint-corrupt': { status: 500, rpc: JsonRpcCode.InternalError, message: 'Checkpoint is unreadable or malformed', retryable: false },
  'checkpoint-mismatch': { status: 409, rpc: JsonRpcCode.InternalError, message: 'Checkpoint belongs to another server or principal', retryable: false },

  // HTTP / protocol validation
  'not-acceptable': { status: 406, rpc: JsonRpcCode.ServerError, message: 'Not Acceptable: client must accept the required media types', retryable: false },
  'unsupported-media-type': {
    status: 415,
    rpc: JsonRpcCode.ServerError,
    message: 'Unsupported Media Type: Content-Type must be application/json',
    retryable: false,
  },
  'method-not-allowed': { status: 405, rpc: JsonRpcCode.ServerError, message: 'Method Not Allowed', retryable: false },
  'parse-error': { status: 400, rpc: JsonRpcCode.ParseError, message: 'Parse error: body is not valid JSON', retryable: false },
  'invalid-request': { status: 400, rpc: JsonRpcCode.InvalidRequest, message: 'Invalid Request: not a JSON-RPC 2.0 message', retryable: false },
  'batch-unsupported': {
    status: 400,
    rpc: JsonRpcCode.InvalidRequest,
    message: 'JSON-RPC batches are not supported by this protocol version',
    retryable: false,
  },
  'protocol-version-unsupported': { status: 400, rpc: JsonRpcCode.ServerError, message: 'Unsupported MCP-Protocol-Version', retryable: false },
  'body-too-large': { status: 413, rpc: JsonRpcCode.ServerError, message: 'Request body too large', retryable: false },
  'event-too-large': { status: 500, rpc: JsonRpcCode.InternalError, message: 'Message exceeds the maximum event size', retryable: false },
  'origin-forbidden': { status: 403, rpc: JsonRpcCode.ServerError, message: 'Forbidden: Origin not allowed', retryable: false },
  'host-forbidden': { status: 403, rpc: JsonRpcCode.ServerError, message: 'Forbidden: Host not allowed', retryable: false },

  // Codec / internal
  'event-id-invalid': { status: 400, rpc: JsonRpcCode.ContinuityRefused, message: 'Malformed event ID', retryable: false },
  'sse-field-invalid': { status: 500, rpc: JsonRpcCode.InternalError, message: 'SSE field contains CR, LF or NUL', retryable: false },
  'store-conflict': { status: 500, rpc: JsonRpcCode.InternalError, message: 'Event log append conflict: sequence is not contiguous', retryable: false },
  'store-unavailable': { status: 503, rpc: JsonRpcCode.InternalError, message: 'Store unavailable', retryable: true },
  'endpoint-closed': { status: 503, rpc: JsonRpcCode.ServerError, message: 'Endpoint is shutting down', retryable: true },
  'internal-error': { status: 500, rpc: JsonRpcCode.InternalError, message: 'Internal error', retryable: false },
  'store-fenced': {
    status: 503,
    rpc: JsonRpcCode.ServerError,
    message: 'Write refused: another replica owns this session now (stale fencing token)',
    retryable: true,
  },
  'owner-unavailable': {
    status: 503,
    rpc: JsonRpcCode.ServerError,
    message:
      'The replica owning this session cannot take the request yet (it does not answer and its lease has not lapsed, or it is taking the session over); retry shortly',
    retryable: true,
  },
  'store-regressed': {
    status: 404,
    rpc: JsonRpcCode.SessionNotFound,
    message: 'Session ended: the store went back in time (a failover or restore lost writes it had acknowledged); initialize a new session',
    retryable: false,
  },
  'store-locked': { status: 500, rpc: JsonRpcCode.InternalError, message: 'Store file is in use by another process', retryable: false },
  'dependency-missing': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: 'An optional dependency this feature needs is not installed',
    retryable: false,
  },
  'store-config-mismatch': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: "The store's configuration (key prefix, lease) disagrees with the running replicas'",
    retryable: false,
  },
  'store-open-failed': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: 'The store could not be opened: its file, its driver or its server cannot be used as it is',
    retryable: false,
  },
  'store-foreign': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: "The store holds another application's data, or a newer release's schema; it is refused untouched",
    retryable: false,
  },
  'bus-event-dropped': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: "A change event on the store's bus was dropped: a malformed one received is ignored, one too large to send is delivered on this replica only",
    retryable: false,
  },
  'restart-failed': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: "The probe's --restart-cmd failed, or the server did not answer again in time after it",
    retryable: false,
  },
  'request-malformed': { status: 400, rpc: JsonRpcCode.ServerError, message: 'Bad Request: malformed request target or headers', retryable: false },
  'stream-complete': { status: 500, rpc: JsonRpcCode.InternalError, message: 'The stream has completed: nothing more can be sent on it', retryable: false },

  // Readers and client limits
  'reader-limit': { status: 429, rpc: JsonRpcCode.ServerError, message: 'Too many readers open on this session', retryable: true },
  'listen-limit': {
    status: 429,
    rpc: JsonRpcCode.ServerError,
    message: 'Too many subscriptions/listen streams open: close one first',
    retryable: true,
    data: '`scope`: `client` when this client holds its share (`limits.maxListensPerClient`), `process` when the whole process is at `limits.maxListens`; `limit`, that bound',
  },
  'reader-cut': {
    status: 503,
    rpc: JsonRpcCode.ServerError,
    message: 'Reader cut off (it lagged, or a newer reader took its stream over); resume with Last-Event-ID',
    retryable: true,
  },
  'inbound-event-too-large': {
    status: 502,
    rpc: JsonRpcCode.InternalError,
    message: 'The server sent an SSE event larger than the client accepts (maxEventBytes)',
    retryable: false,
  },
  'inbound-message-invalid': {
    status: 502,
    rpc: JsonRpcCode.InternalError,
    message: 'The server sent a message the client cannot read (a binary WebSocket frame); it was ignored',
    retryable: false,
  },
  'reinitialize-failed': {
    status: 502,
    rpc: JsonRpcCode.ServerError,
    message: 'Re-initializing the session failed: the server refused the initialize request, or its initialize request is unknown',
    retryable: false,
  },
  'transport-started': {
    status: 500,
    rpc: JsonRpcCode.InternalError,
    message: 'The transport was started twice (the SDK Client starts it in connect())',
    retryable: false,
  },
  'divergence-limit': {
    status: 502,
    rpc: JsonRpcCode.ContinuityRefused,
    message: 'The server diverged too many times in a row; the transport gave up re-initializing',
    retryable: false,
  },
  'server-busy': {
    status: 503,
    rpc: JsonRpcCode.ServerError,
    message: 'Server busy: too many request bodies are being received at once; retry shortly',
    retryable: true,
  },
  'response-invalid': {
    status: 502,
    rpc: JsonRpcCode.InternalError,
    message: 'The server answered a request with something that is not its MCP response (another media type, or no JSON-RPC answer)',
    retryable: false,
  },
} as const satisfies Record<string, ErrorSpec>;

/** Every public error code. */
export type ErrorCode = keyof typeof ERRORS;

const BRAND = Symbol.for('mcp-continuity.error');

/**
 * Base class of every error this library raises on purpose. Match on `code`.
 *
 * @example
 * ```ts
 * if (isContinuityError(err) && err.code === 'replay-window-exceeded') reinitialize();
 * ```
 */
export class ContinuityError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly rpcCode: number;
  readonly retryable: boolean;
  /** Extra machine-readable detail, sent as `error.data` beside `reason`. */
  readonly detail: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, detail?: Record<string, unknown>, options?: { cause?: unknown }) {
    const spec = ERRORS[code];
    super(message ?? spec.message, options);
    this.name = 'ContinuityError';
    this.code = code;
    this.status = spec.status;
    this.rpcCode = spec.rpc;
    this.retryable = spec.retryable;
    this.detail = detail;
  }

  /** `error.data` on the wire: the reason plus any detail. */
  toData(): Record<string, unknown> {
    // The code goes last: no detail may overwrite it on the wire.
    return { ...this.detail, reason: this.code };
  }

  /** A JSON-RPC error object for this error. */
  toJsonRpcError(): { code: number; message: string; data: Record<string, unknown> } {
    return { code: this.rpcCode, message: this.message, data: this.toData() };
  }

  /** Works across module copies (dual packages, bundles). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    // Subclasses keep ordinary prototype checks; only the base matches by brand.
    if (this !== ContinuityError) return Function.prototype[Symbol.hasInstance].call(this, value);
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}
Object.defineProperty(ContinuityError.prototype, BRAND, { value: true });

/** Type guard: is `value` a {@link ContinuityError} (optionally with the given code)? */
export function isContinuityError<C extends ErrorCode>(value: unknown, code?: C): value is ContinuityError & { code: C } {
  return value instanceof ContinuityError && (code === undefined || value.code === code);
}

/** Is `value` one of the public codes? Used to map a wire `reason` back to a typed error. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERRORS, value);
}

/**
 * `value` as an Error: what was thrown is passed on as it is when it is one, and wrapped
 * otherwise, so an `onError` hook always gets an Error.
 */
export function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}
