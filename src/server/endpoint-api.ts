/** What an endpoint offers its adapters: the contract `createEndpoint` fulfils. */
import type { Store } from '../store/types.js';
import type { HostGuardOptions } from './host-guard.js';
import type { HandleContext } from './session/context.js';
import type { UpgradeDecision } from './upgrade/gate.js';

/** A Streamable HTTP endpoint. Mount `handle` on any framework that speaks `Request`/`Response`. */
export interface Endpoint {
  /** Answers one HTTP request. Never throws: failures become refusals from the error table. */
  handle(request: Request, context?: HandleContext): Promise<Response>;
  /**
   * Stops accepting requests and closes live sessions' connections. Durable stores keep their sessions.
   *
   * With `drainMs`, a graceful stop first (a deploy): no new session is taken here (503
   * `server-draining`, retryable), idle sessions are let go at once (in a cluster their
   * leases are released, so another replica takes each on its next request), calls in
   * flight have up to `drainMs` to finish, and their sessions are let go as they do; then
   * whatever is left is abandoned. See {@link DEFAULT_DRAIN_MS}.
   */
  close(options?: CloseOptions): Promise<void>;
  /** Live sessions in this process. */
  readonly sessionCount: number;
  /**
   * Declares a session's replay log lost or damaged: the log restarts under a new epoch,
   * and every older cursor of the session is refused with `replay-epoch-mismatch` (409).
   * Throws `session-not-found` for an unknown session.
   */
  resetReplayLog(sessionId: string): Promise<void>;
  /** The store in use. */
  readonly store: Store;
  /** This replica's ID (the cluster's, or one made for this endpoint): logs and events name it. */
  readonly replicaId: string;
  /**
   * True once {@link Endpoint.close} has begun (including a drain, `close({ drainMs })`):
   * the endpoint takes no new sessions, and a readiness probe should take it out of its
   * load balancer.
   */
  readonly draining: boolean;
  /**
   * Decides a WebSocket upgrade request (the Node adapter calls it from its `upgrade`
   * event). A refusal carries the HTTP response to write; an acceptance names the
   * subprotocol and takes the socket once the 101 is written.
   */
  upgrade(request: Request, context?: HandleContext): Promise<UpgradeDecision>;
  /**
   * Installs a Host/Origin guard unless the options chose one. Adapters call this for
   * loopback binds, where DNS rebinding is the threat.
   * @internal
   */
  defaultHostGuard(guard: HostGuardOptions): void;
}

/** Options of {@link Endpoint.close}. */
export interface CloseOptions {
  /** Time for calls in flight to finish before they are abandoned, ms (0: none). */
  drainMs?: number | undefined;
  /**
   * Time the store gets after the drain to take back this process's leases and
   * subscriptions, ms (default {@link DEFAULT_RELEASE_MS}). A store that does not answer
   * within it cannot hold the close longer: the leases then lapse on their own.
   */
  releaseMs?: number | undefined;
}

/** Default {@link CloseOptions.releaseMs}: a release is one round trip per session, well within it. */
export const DEFAULT_RELEASE_MS = 300;

/**
 * A drain window that fits Kubernetes' default 30 s grace period with room for a preStop
 * delay and the process's own exit: 20 s.
 */
export const DEFAULT_DRAIN_MS = 20_000;
