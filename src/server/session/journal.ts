/**
 * What a session holds beyond its event log, kept so a rebuilt session (restart,
 * passivation, takeover) is the same session: the client requests whose effect lasts for
 * the session, and the application's own saved state. Pure: it decides and serializes;
 * the session writes the result with its record (under its fencing token) and replays it.
 *
 * Lasting requests in the revisions served (2025-03-26, 2025-06-18, 2025-11-25):
 * - `logging/setLevel`: the last one wins;
 * - `resources/subscribe` per URI, undone by `resources/unsubscribe` of that URI.
 * Everything else a client sends either is part of `initialize` (capabilities, client
 * info, protocol version: replayed already), or lasts for one request.
 */
import { ContinuityError } from '../../protocol/errors.js';

/** One journaled request: its method and params (`_meta` dropped: it belonged to that one request). */
export interface LastingRequest {
  readonly method: string;
  readonly params?: Record<string, unknown> | undefined;
}

/** Bounds of one session's lasting state. */
export interface StateLimits {
  /** Journaled requests per session (subscriptions count one each). */
  readonly maxEntries: number;
  /** Serialized state (journal plus application state), UTF-8 bytes. */
  readonly maxBytes: number;
}

/** Methods whose successful requests are journaled. */
export const LASTING_METHODS: readonly string[] = ['logging/setLevel', 'resources/subscribe', 'resources/unsubscribe'];

/** What a lasting request does to the journal: sets `key` to the request, or removes `key`. */
interface Effect {
  readonly key: string;
  readonly remove: boolean;
}

function effectOf(method: string, params: Record<string, unknown> | undefined): Effect | undefined {
  if (method === 'logging/setLevel') return { key: method, remove: false };
  const uri = params?.['uri'];
  if (typeof uri !== 'string') return undefined;
  if (method === 'resources/subscribe') return { key: `resources/subscribe ${uri}`, remove: false };
  if (method === 'resources/unsubscribe') return { key: `resources/subscribe ${uri}`, remove: true };
  return undefined;
}

/** Is `method` one whose answered requests change the journal? */
export function isLasting(method: string): boolean {
  return LASTING_METHODS.includes(method);
}

interface Serialized {
  v: 1;
  journal: LastingRequest[];
  app?: string;
}

export class SessionJournal {
  /** Key → request, in the order each key was first set (replay order). */
  readonly #entries = new Map<string, LastingRequest>();
  #app: string | undefined;
  readonly #limits: StateLimits;

  /** `state`: what {@link serialize} wrote before (a record's `state`), or undefined. */
  constructor(state: string | undefined, limits: StateLimits) {
    this.#limits = limits;
    if (state === undefined) return;
    const parsed = JSON.parse(state) as Serialized;
    for (const r of parsed.journal ?? []) {
      const effect = effectOf(r.method, r.params);
      if (effect && !effect.remove) this.#entries.set(effect.key, r);
    }
    if (typeof parsed.app === 'string') this.#app = parsed.app;
  }

  /** The application state last saved, if any. */
  get app(): string | undefined {
    return this.#app;
  }

  /** The requests to replay into a rebuilt server, in order. */
  replay(): LastingRequest[] {
    return [...this.#entries.values()];
  }

  /**
   * Refuses (before it runs) a request that would take the session past its bounds.
   * Throws `session-state-limit`.
   */
  admit(method: string, params: Record<string, unknown> | undefined): void {
    const effect = effectOf(method, params);
    if (!effect || effect.remove) return;
    if (!this.#entries.has(effect.key) && this.#entries.size >= this.#limits.maxEntries) {
      throw new ContinuityError('session-state-limit', `At most ${this.#limits.maxEntries} lasting requests per session`, { limit: this.#limits.maxEntries });
    }
    // Bytes are checked on the state as it would be, so an answered request is always journaled.
    const entry = withoutMeta(method, params);
    const before = this.#entries.get(effect.key);
    this.#entries.set(effect.key, entry);
    try {
      this.serialize();
    } finally {
      if (before) this.#entries.set(effect.key, before);
      else this.#entries.delete(effect.key);
    }
  }

  /**
   * Records a request the server answered successfully. Returns the new serialized state
   * when the journal changed, undefined when it did not (nothing to write).
   */
  apply(method: string, params: Record<string, unknown> | undefined): string | undefined {
    const effect = effectOf(method, params);
    if (!effect) return undefined;
    if (effect.remove) {
      if (!this.#entries.delete(effect.key)) return undefined;
      return this.serialize();
    }
    const entry = withoutMeta(method, params);
    const before = this.#entries.get(effect.key);
    if (before && JSON.stringify(before) === JSON.stringify(entry)) return undefined;
    // A new value for a key keeps its place: replay order follows first appearance.
    this.#entries.set(effect.key, entry);
    return this.serialize();
  }

  /** Sets the application state; returns the serialized state. Throws `session-state-limit` past maxBytes. */
  setApp(state: string): string {
    const before = this.#app;
    this.#app = state;
    try {
      return this.serialize();
    } catch (error) {
      this.#app = before;
      throw error;
    }
  }

  /** The state as stored in the record. Throws `session-state-limit` past maxBytes. */
  serialize(): string {
    const out: Serialized = { v: 1, journal: [...this.#entries.values()] };
    if (this.#app !== undefined) out.app = this.#app;
    const text = JSON.stringify(out);
    const bytes = new TextEncoder().encode(text).byteLength;
    if (bytes > this.#limits.maxBytes) {
      throw new ContinuityError('session-state-limit', `Session state would be ${bytes} bytes; at most ${this.#limits.maxBytes}`, {
        limit: this.#limits.maxBytes,
      });
    }
    return text;
  }
}

function withoutMeta(method: string, params: Record<string, unknown> | undefined): LastingRequest {
  if (params === undefined) return { method };
  const { _meta: _dropped, ...rest } = params;
  return { method, params: rest };
}
