/** What a session knows of the SDK server it runs and of the request that reached it. */
/** The part of an official SDK server (v1 `McpServer`/`Server`, v2 `McpServer`/`Server`) we use. */
export interface SdkServerLike {
  connect(transport: never): Promise<void>;
  close(): Promise<void>;
}

/** Passed to the server factory for each new session. */
export interface SessionContext {
  readonly sessionId: string;
  /** `true` when the session is being rebuilt from the store (restart, passivation, takeover). */
  readonly rehydrating: boolean;
  /** When rebuilding: the application state last saved with {@link saveState}, if any. */
  readonly state?: string | undefined;
  /**
   * Saves the application's own per-session state with the session record, under the
   * session's fencing token (a replica that lost the session cannot overwrite it); a
   * rebuilt session's factory gets it back as {@link state}. Resolves once stored. The
   * state counts towards `limits.maxSessionStateBytes` (`session-state-limit` past it).
   */
  saveState(state: string): Promise<void>;
}

/** Per-request context a host framework may pass to {@link Endpoint.handle}. */
export interface HandleContext {
  /** Authentication info, forwarded to the SDK server as `extra.authInfo`. */
  authInfo?: unknown;
  /**
   * The authenticated principal. A session created with one is bound to it: a request
   * from another principal is answered exactly like an unknown session (404).
   */
  principal?: string | undefined;
  /**
   * Who sent the request where no principal says so, for per-client bounds (the modern
   * leg's `subscriptions/listen` slots). The Node adapters set the peer's address; behind a
   * proxy every client shares the proxy's, so a host there sets it from a header it trusts.
   */
  client?: string | undefined;
}

/** Makes a fresh official-SDK server for each session (and for each rebuild of one). */
export type ServerFactory = (context: SessionContext) => SdkServerLike | Promise<SdkServerLike>;
