/** Options of the client transport, and the report it gives after a divergence. */
import type { ContinuityError, ErrorCode } from '../protocol/errors.js';
import type { ReconnectOptions } from './backoff.js';
import type { CheckpointStore } from './checkpoint.js';
import type { ReconnectEvent } from '../telemetry/events.js';

/** What the application is told after a divergence or a lost session. */
export interface DivergenceReport {
  /** The case: a divergence verdict's kind, or a server refusal (`session-not-found`, …). */
  code: ErrorCode;
  error: ContinuityError;
  previousSessionId: string | undefined;
  /** The session that replaced it (undefined if re-initialization failed). */
  sessionId: string | undefined;
  /** In-flight requests failed with `error` (never silently re-sent). */
  failedRequests: number;
  /** From the start of the reconnection that found it to the verdict, ms (0 if found live). */
  detectMs: number;
  /** Time to re-initialize, ms. */
  reinitializeMs: number;
  /** Set when re-initialization itself failed (or the transport gave up: `divergence-limit`). */
  reinitializeError?: Error | undefined;
  /** This divergence's place in a row of divergences (1 when the session before it was stable). */
  consecutive: number;
  /** How long re-initializing waited because of the row (0 for the first), ms. */
  backoffMs: number;
}

/** Options of {@link ContinuityClientTransport}. */
export interface ContinuityClientOptions {
  /** Where the session checkpoint persists (default: memory). `fileCheckpoint(path)` survives restarts. */
  checkpoint?: CheckpointStore | undefined;
  /**
   * Who the client acts for (a user or account ID; not a credential). Every checkpoint
   * records a digest of it, and a checkpoint recorded for another principal (or for none,
   * when one is given now) fails `connect` with `checkpoint-mismatch`. A TypeError names a
   * principal that is empty or longer than 4096 characters.
   */
  principal?: string | undefined;
  /** A `fetch` to use (default: the global one). */
  fetch?: ((url: URL, init: RequestInit) => Promise<Response>) | undefined;
  /** Extra headers on every request (authorization, say); a function is called per request. */
  headers?: (Record<string, string> | (() => Record<string, string>)) | undefined;
  /** Accept opaque event IDs after a resume instead of re-initializing (default false: the safe posture of docs/design.md §3). */
  trustOpaqueIds?: boolean | undefined;
  reconnect?: ReconnectOptions | undefined;
  /**
   * Largest SSE event accepted from the server, bytes (default 16 MiB). Past it the
   * connection is dropped with `inbound-event-too-large` (reported through `onerror`) and
   * the stream resumes as after any lost connection; the oversized event is never buffered.
   */
  maxEventBytes?: number | undefined;
  /** Open the standalone GET stream (default true). */
  standaloneStream?: boolean | undefined;
  /**
   * How often the checkpoint is saved while events flow, ms (default 100). Never per event:
   * a verified event only marks its stream as moved, and the save, at most this long after,
   * stores where each stream then stands. One save runs at a time; a store slower than this
   * gets the latest positions when it is free. A restarted client resumes from the last save.
   */
  checkpointIntervalMs?: number | undefined;
  /**
   * Called when a dropped stream reconnects: `resumed` (continuity proven), `opened` (a fresh
   * standalone stream), or the error code that refused it (a divergence then follows).
   */
  onReconnect?: ((event: ReconnectEvent) => void) | undefined;
  /** Called after every divergence or session loss, once the client has re-initialized. */
  onDivergence?: ((report: DivergenceReport) => void) | undefined;
  /**
   * Send `x-mcp-seen` with every request: the last event IDs this client holds, so that any
   * replica notices a store that lost them (docs/design.md §2). Default true, except in a
   * browser page calling another origin: there the server's CORS settings must allow the
   * header first (`x-mcp-seen` among the allowed request headers), then set it to true.
   */
  seen?: boolean | undefined;
  /** The opt-in SSE→WebSocket upgrade (docs/design.md §4): ask for it, and follow the offer. */
  upgrade?: { websocket: boolean; maxFrameBytes?: number } | undefined;
}
