/**
 * The readers this replica serves for sessions owned elsewhere, grouped by session: the
 * same per-session bound as the owner's (`maxReadersPerSession`, through the same
 * {@link SessionReaders}), and the session's lifecycle, which arrives on the bus: when its
 * owner ends it (DELETE, supersession, idle expiry) every reader here ends too. A session
 * is tracked only while it has readers here.
 */
import { toError } from '../../protocol/errors.js';
import type { ClusterBus, SessionStore, Unsubscribe } from '../../store/types.js';
import { SessionReaders, type SseSink, type SseSinkOptions } from '../stream/sse-sink.js';

interface View {
  readonly readers: SessionReaders;
  readonly sinks: Set<SseSink>;
  readonly unsubscribe: Promise<Unsubscribe | undefined>;
}

export class RemoteReaders {
  readonly #views = new Map<string, View>();
  readonly #sessions: SessionStore;
  readonly #bus: ClusterBus;
  readonly #onError: (error: Error) => void;

  constructor(sessions: SessionStore, bus: ClusterBus, onError: (error: Error) => void) {
    this.#sessions = sessions;
    this.#bus = bus;
    this.#onError = onError;
  }

  /** A new reader of `session`; counted against `max` (a GET) when one is given, as on the owner. */
  open(session: string, options: SseSinkOptions, max: number | undefined): SseSink {
    const view = this.#views.get(session) ?? this.#watch(session);
    let sink: SseSink;
    try {
      sink = view.readers.open(
        {
          ...options,
          onEnd: (ended) => {
            options.onEnd?.(ended);
            view.sinks.delete(ended);
            if (view.sinks.size === 0) this.#forget(session, view);
          },
        },
        max,
      );
    } catch (error) {
      if (view.sinks.size === 0) this.#forget(session, view);
      throw error;
    }
    view.sinks.add(sink);
    return sink;
  }

  /** Sessions with readers here (for tests and metrics). */
  get size(): number {
    return this.#views.size;
  }

  /** Ends every reader (the endpoint is closing). */
  close(): void {
    for (const view of [...this.#views.values()]) for (const sink of [...view.sinks]) sink.close();
  }

  #watch(session: string): View {
    const view: View = {
      readers: new SessionReaders(),
      sinks: new Set(),
      // A notice naming no stream: the session may have ended (or the bus reconnected); the store says which.
      unsubscribe: this.#bus
        .subscribeAppends(session, (notice) => {
          if (notice.stream === '') void this.#check(session);
        })
        .catch((error: unknown) => {
          this.#onError(toError(error));
          return undefined;
        }),
    };
    this.#views.set(session, view);
    return view;
  }

  async #check(session: string): Promise<void> {
    const view = this.#views.get(session);
    if (!view) return;
    try {
      if (await this.#sessions.get(session)) return;
    } catch {
      return; // an unreachable store ends nothing: the tails notice it themselves
    }
    for (const sink of [...view.sinks]) sink.close();
  }

  #forget(session: string, view: View): void {
    if (this.#views.get(session) !== view) return;
    this.#views.delete(session);
    void view.unsubscribe.then((u) => u?.()).catch(() => {});
  }
}
