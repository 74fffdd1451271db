/**
 * Recovery after a divergence or a lost session: fail what the old session owes with the
 * typed error, re-initialize (after a backoff when divergences come in a row, or give up at
 * the limit), and tell the application what it cost. Concurrent detections share one
 * recovery. The transport does the I/O through {@link RecoveryHost}.
 */
import { toError, type ContinuityError } from '../protocol/errors.js';
import type { ResolvedReconnect } from './backoff.js';
import { DivergenceRow } from './divergence-row.js';
import type { DivergenceReport } from './options.js';

export interface RecoveryHost {
  /**
   * Fails every request of the old session with `error`, drops its streams and forgets it:
   * how many failed now, and how many more once the POSTs still on their way have settled.
   */
  failSession(error: ContinuityError): { failed: number; settled: Promise<number> };
  /** Waits `ms` before re-initializing (rejects when the transport closes). */
  backoff(ms: number): Promise<void>;
  /** A new session like the lost one; resolves with its ID. */
  reinitialize(): Promise<string | undefined>;
  /** The transport gives up for good with `limit`. */
  giveUp(limit: ContinuityError): void;
  report(error: Error): void;
  diverged(report: DivergenceReport): void;
}

export class Recovery {
  readonly #row: DivergenceRow;
  #running: Promise<void> | undefined;

  constructor(reconnect: ResolvedReconnect) {
    this.#row = new DivergenceRow(reconnect);
  }

  /** The recovery under way, if any (sends wait for it). */
  get running(): Promise<void> | undefined {
    return this.#running;
  }

  /** A request was answered: the session works. */
  answered(): void {
    this.#row.answered();
  }

  /** Recovers from `error`, found on `previous` `detectMs` after its reconnection began. */
  start(host: RecoveryHost, error: ContinuityError, previous: string | undefined, detectMs: number): Promise<void> {
    if (this.#running) return this.#running;
    const detectedAt = Date.now();
    const { failed, settled } = host.failSession(error);
    const { consecutive, backoffMs, limit } = this.#row.diverged(error, detectedAt);
    const report: DivergenceReport = {
      code: error.code,
      error,
      previousSessionId: previous,
      sessionId: undefined,
      failedRequests: failed,
      detectMs,
      reinitializeMs: 0,
      consecutive,
      backoffMs,
    };
    this.#running = (async () => {
      const started = Date.now();
      try {
        if (limit) {
          host.giveUp(limit);
          throw limit;
        }
        if (backoffMs > 0) await host.backoff(backoffMs);
        report.sessionId = await host.reinitialize();
        this.#row.reinitialized(Date.now());
      } catch (e) {
        report.reinitializeError = toError(e);
        host.report(report.reinitializeError);
      }
      report.reinitializeMs = Date.now() - started;
      report.failedRequests += await settled;
      host.diverged(report);
    })().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }
}
