/**
 * The events operators watch, typed: the endpoint's and the client's hooks receive these,
 * and the same events are counted as metrics. A hook is called synchronously where the
 * event happens; what it throws is caught and dropped (an observer cannot break a session).
 */
import type { ErrorCode } from '../protocol/errors.js';

/** A resume (`GET` with `Last-Event-ID`) was answered: replayed and tailed, or refused. */
export interface ResumeEvent {
  readonly sessionId: string;
  /** `resumed`, or the refusal's error code (`replay-window-exceeded`, `cursor-invalid`, …). */
  readonly outcome: 'resumed' | ErrorCode;
  readonly lastEventId: string;
  readonly replicaId: string;
}

/** A request was refused with a code from the error table. */
export interface RefusalEvent {
  readonly code: ErrorCode;
  readonly status: number;
  readonly method: string;
  /** Absent when the request named none (or it was malformed). */
  readonly sessionId: string | undefined;
  /** The JSON-RPC id of the request a POST carried, when it carried exactly one. */
  readonly requestId: string | number | undefined;
  /** The cursor of a refused resume (then a {@link ResumeEvent} with the same code follows). */
  readonly lastEventId: string | undefined;
  readonly replicaId: string;
}

/** This replica took a session over from another replica (its lease lapsed or was released). */
export interface TakeoverEvent {
  readonly sessionId: string;
  /** The fencing token this replica now holds the session under. */
  readonly token: number;
  readonly replicaId: string;
}

/**
 * A session was rebuilt from the store into this process (after a restart, a passivation or
 * a takeover); requests left in flight by the process that held it were answered with
 * `request-abandoned`.
 */
export interface RebuildEvent {
  readonly sessionId: string;
  readonly replicaId: string;
}

/** An idle session was dropped from memory; the store keeps it for its next request. */
export interface PassivationEvent {
  readonly sessionId: string;
  readonly replicaId: string;
}

/** The endpoint stopped taking requests and let its sessions go. */
export interface DrainEvent {
  /** `completed`: every session was handed over or ended within the window; `abandoned`: some calls were cut. */
  readonly outcome: 'completed' | 'abandoned';
  /** Sessions this process held when the drain began. */
  readonly sessions: number;
  readonly durationMs: number;
  readonly replicaId: string;
}

/** Hooks of an endpoint: the events its metrics count, one callback each. */
export interface EndpointHooks {
  onResume?: ((event: ResumeEvent) => void) | undefined;
  onRefusal?: ((event: RefusalEvent) => void) | undefined;
  onTakeover?: ((event: TakeoverEvent) => void) | undefined;
  onRebuild?: ((event: RebuildEvent) => void) | undefined;
  onPassivation?: ((event: PassivationEvent) => void) | undefined;
  onDrain?: ((event: DrainEvent) => void) | undefined;
}

/** A client reconnection of one stream: resumed, or what stopped it. */
export interface ReconnectEvent {
  readonly sessionId: string | undefined;
  /** `request` (a POST's response stream) or `standalone` (the GET stream). */
  readonly stream: 'request' | 'standalone';
  /** `resumed` (the server proved continuity), `opened` (a fresh standalone stream), or the error code that ended it. */
  readonly outcome: 'resumed' | 'opened' | ErrorCode;
  /** Failed attempts before this one. */
  readonly attempt: number;
  /** From the cut to this outcome, ms (0 when the stream reconnected at once). */
  readonly ms: number;
}

/** Calls `hook` with `event`; a throwing hook is dropped, never the caller's problem. */
export function callHook<E>(hook: ((event: E) => void) | undefined, event: E): void {
  if (!hook) return;
  try {
    hook(event);
  } catch {
    // An observer's failure must not change what the session does.
  }
}
