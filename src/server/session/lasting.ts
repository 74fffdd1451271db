/**
 * A live session's lasting state: the journal of lasting requests (see ./journal.ts) and
 * the application's saved state, written with the session record under the session's
 * fencing token, and replayed into the fresh server of a rebuilt session.
 *
 * Order matters for "nothing accepted is lost": a lasting request's answer is held until
 * the journal that includes it is stored, so a client never sees a subscription confirmed
 * that a rebuild would forget.
 */
import { ContinuityError } from '../../protocol/errors.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../../protocol/jsonrpc.js';
import type { SessionRecord } from '../../store/types.js';
import type { ResolvedLimits } from '../stream/limits.js';
import type { SessionContext } from './context.js';
import { SessionJournal, isLasting, type LastingRequest } from './journal.js';

export class LastingState {
  readonly #record: SessionRecord;
  readonly #journal: SessionJournal;
  /** Lasting requests admitted and not yet answered, by request key. */
  readonly #pending = new Map<string, LastingRequest>();
  readonly #write: (record: SessionRecord) => Promise<void>;

  /** `write` stores the record under the session's fencing token. */
  constructor(record: SessionRecord, limits: ResolvedLimits, write: (record: SessionRecord) => Promise<void>) {
    this.#record = record;
    this.#write = write;
    const bounds = { maxEntries: limits.maxSessionStateEntries, maxBytes: limits.maxSessionStateBytes };
    try {
      this.#journal = new SessionJournal(record.state, bounds);
    } catch (error) {
      throw new ContinuityError('internal-error', 'The stored session state is unreadable', undefined, { cause: error });
    }
  }

  /** What the server factory is given for this session. */
  context(rehydrating: boolean): SessionContext {
    const state = this.#journal.app;
    return {
      sessionId: this.#record.id,
      rehydrating,
      ...(rehydrating && state !== undefined ? { state } : {}),
      saveState: (next: string) => this.saveApp(next),
    };
  }

  /** Refuses (`session-state-limit`) a POST whose lasting requests would take the session past its bounds. */
  check(requests: readonly JsonRpcRequest[]): void {
    for (const r of requests) if (isLasting(r.method)) this.#journal.admit(r.method, r.params);
  }

  /** Takes note of the lasting requests among `requests` (admitted, under `keys`), to journal their success. */
  track(requests: readonly JsonRpcRequest[], keys: readonly string[]): void {
    requests.forEach((r, i) => {
      const key = keys[i];
      if (key !== undefined && isLasting(r.method)) this.#pending.set(key, { method: r.method, params: r.params });
    });
  }

  /** A response is about to be sent for request `key`: a successful lasting request is stored first. */
  async answered(key: string, message: JsonRpcMessage): Promise<void> {
    const request = this.#pending.get(key);
    if (!request) return;
    this.#pending.delete(key);
    if (!('result' in message)) return;
    const state = this.#journal.apply(request.method, request.params);
    if (state === undefined) return;
    this.#record.state = state;
    await this.#write(this.#record);
  }

  /** Stores the application's state with the session (fenced). Throws `session-state-limit` past its bound. */
  async saveApp(state: string): Promise<void> {
    if (typeof state !== 'string') throw new TypeError('saveState() takes a string');
    this.#record.state = this.#journal.setApp(state);
    await this.#write(this.#record);
  }

  /**
   * Replays the journal into a rebuilt server, one request at a time, in the order the
   * client first sent them; `send` resolves once the server answered (the answer is
   * dropped). Bounded by `timeoutMs`: a handler that never answers fails the rebuild.
   */
  async replay(send: (request: JsonRpcRequest) => Promise<void>, timeoutMs: number): Promise<void> {
    const entries = this.#journal.replay();
    if (entries.length === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ContinuityError('internal-error', `Replaying the session's lasting requests took over ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      const run = (async () => {
        for (const [n, r] of entries.entries()) {
          await send({ jsonrpc: '2.0', id: `mcpc-rebuild-${n}`, method: r.method, ...(r.params ? { params: r.params } : {}) });
        }
      })();
      await Promise.race([run, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
