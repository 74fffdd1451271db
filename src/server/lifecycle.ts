/**
 * An endpoint's life: open, draining, closed; and the gate every request passes first
 * (closed endpoint, Host/Origin guard).
 */
import { ContinuityError } from '../protocol/errors.js';
import { Header } from '../protocol/headers.js';
import { checkHostAndOrigin, type HostGuardOptions } from './host-guard.js';
import { DEFAULT_RELEASE_MS, type CloseOptions } from './endpoint-api.js';
import type { Placement } from './cluster/placement.js';
import type { ServerObserver } from '../telemetry/server.js';

const DRAINED = 'This process drained and is closing: the request was not accepted; retry shortly';

export class EndpointLifecycle {
  #guard: HostGuardOptions | false | undefined;
  /** Set once closed: the refusal a request then gets. */
  #closed: 'endpoint-closed' | 'server-draining' | undefined;
  #closing: Promise<void> | undefined;
  readonly #placement: Placement;
  readonly #observer: ServerObserver;
  readonly #now: () => number;

  constructor(guard: HostGuardOptions | false | undefined, placement: Placement, observer: ServerObserver, now: () => number) {
    this.#guard = guard;
    this.#placement = placement;
    this.#observer = observer;
    this.#now = now;
  }

  /** True once a close (or a drain) has begun. */
  get draining(): boolean {
    return this.#closing !== undefined;
  }

  /** Installs `guard` unless the options chose one (or chose none). */
  defaultHostGuard(guard: HostGuardOptions): void {
    if (this.#guard === undefined) this.#guard = guard;
  }

  /** Throws the refusal a request gets before routing: the endpoint is closed, or the guard refuses it. */
  readonly check = (request: Request): void => {
    if (this.#closed) throw new ContinuityError(this.#closed, this.#closed === 'server-draining' ? DRAINED : undefined);
    const guard = this.#guard;
    if (guard) checkHostAndOrigin(guard, request.headers.get(Header.Host) ?? new URL(request.url).host, request.headers.get(Header.Origin));
  };

  /**
   * Drains for `drainMs` if asked, then closes the placement, giving the store `releaseMs`
   * to take back the leases: a store that does not answer cannot hold the close past
   * `drainMs + releaseMs` (the leases then lapse on their own). The drain is reported as
   * it went: `abandoned` when calls were cut. A second close waits for the first.
   */
  close(options: CloseOptions = {}): Promise<void> {
    const drainMs = options.drainMs ?? 0;
    const releaseMs = options.releaseMs ?? DEFAULT_RELEASE_MS;
    for (const [name, value] of [
      ['drainMs', drainMs],
      ['releaseMs', releaseMs],
    ] as const) {
      if (!(value >= 0 && Number.isFinite(value))) return Promise.reject(new RangeError(`${name} must be a finite number >= 0, got ${String(value)}`));
    }
    // A second close (a second signal, the listener's own) waits for the first.
    this.#closing ??= (async () => {
      const started = this.#now();
      const held = this.#placement.size;
      const finished = drainMs > 0 ? await this.#placement.drain(drainMs) : !this.#placement.busy;
      // After a drain, a request still reaching this endpoint (a connection opened before it)
      // gets the drain's answer: not accepted, retry elsewhere.
      this.#closed = drainMs > 0 ? 'server-draining' : 'endpoint-closed';
      await bounded(this.#placement.close(), releaseMs);
      this.#observer.drain(finished ? 'completed' : 'abandoned', held, this.#now() - started);
    })();
    return this.#closing;
  }
}

/** `work`, or its end left to run in the background after `ms`. */
async function bounded(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref?.();
  });
  try {
    await Promise.race([work.catch(() => {}), late]);
  } finally {
    clearTimeout(timer);
  }
}
