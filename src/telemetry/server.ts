/**
 * The endpoint's side of observability: each event is counted on the metrics and handed to
 * the endpoint's hook, in one call at the place it happens. Events that belong to the
 * process rather than to one endpoint (replayed bytes, reader cuts, fenced writes) are
 * counted by the plain functions below.
 */
import type { Attributes } from '@opentelemetry/api';
import type { ErrorCode } from '../protocol/errors.js';
import { callHook, type DrainEvent, type EndpointHooks } from './events.js';
import { instruments } from './meter.js';

/** `error.type` is the semantic conventions' name for "what kind of failure". */
const ERROR_TYPE = 'error.type';

/** Counts an endpoint's events and calls its hooks. */
export class ServerObserver {
  readonly replicaId: string;
  readonly #hooks: EndpointHooks;

  constructor(replicaId: string, hooks: EndpointHooks) {
    this.replicaId = replicaId;
    this.#hooks = hooks;
  }

  /** A resume was answered (`outcome` `resumed`) or refused (its code). */
  resume(sessionId: string, lastEventId: string, outcome: 'resumed' | ErrorCode): void {
    instruments().resumes.add(1, { 'mcp_continuity.outcome': outcome });
    callHook(this.#hooks.onResume, { sessionId, lastEventId, outcome, replicaId: this.replicaId });
  }

  /** A request was refused. */
  refusal(
    code: ErrorCode,
    status: number,
    request: Request,
    ids: { sessionId: string | null; requestId: string | number | null; lastEventId: string | null },
  ): void {
    instruments().refusals.add(1, { [ERROR_TYPE]: code, 'http.response.status_code': status });
    callHook(this.#hooks.onRefusal, {
      code,
      status,
      method: request.method,
      sessionId: ids.sessionId ?? undefined,
      requestId: ids.requestId ?? undefined,
      lastEventId: ids.lastEventId ?? undefined,
      replicaId: this.replicaId,
    });
  }

  takeover(sessionId: string, token: number): void {
    instruments().takeovers.add(1);
    callHook(this.#hooks.onTakeover, { sessionId, token, replicaId: this.replicaId });
  }

  rebuild(sessionId: string): void {
    instruments().rebuilds.add(1);
    callHook(this.#hooks.onRebuild, { sessionId, replicaId: this.replicaId });
  }

  passivation(sessionId: string): void {
    instruments().passivations.add(1);
    callHook(this.#hooks.onPassivation, { sessionId, replicaId: this.replicaId });
  }

  drain(outcome: DrainEvent['outcome'], sessions: number, durationMs: number): void {
    instruments().drains.add(1, { 'mcp_continuity.outcome': outcome });
    callHook(this.#hooks.onDrain, { outcome, sessions, durationMs, replicaId: this.replicaId });
  }
}

/** Events and payload bytes replayed from the log to a resuming reader (one page). */
export function countReplayed(events: number, bytes: number): void {
  if (events === 0) return;
  const m = instruments();
  m.replayedEvents.add(events);
  m.replayedBytes.add(bytes);
}

/** Why a reader was cut: behind (its own bound, the process-wide one, or stalled), or a newer reader took its stream. */
export type CutReason = 'behind' | 'taken-over';

/** A reader was cut off (it can resume from the log). */
export function countReaderCut(reason: CutReason): void {
  instruments().readerCuts.add(1, { 'mcp_continuity.reason': reason });
}

/** The store refused a write: another replica holds the session under a newer fencing token. */
export function countFencedWrite(): void {
  instruments().fencedWrites.add(1);
}

/** A session ended (deleted or expired, not passivated): its whole life, seconds. */
export function recordSessionEnd(createdAt: number, endedAt: number, protocolVersion: string): void {
  const attributes: Attributes = { 'mcp.protocol.version': protocolVersion, 'network.transport': 'tcp' };
  instruments().serverSessionDuration.record(Math.max(0, endedAt - createdAt) / 1000, attributes);
}
