/**
 * A placement's graceful stop (`close({ drainMs })`): from its start no session is created,
 * rebuilt or taken over here, and the sessions held here take no new calls (503
 * `server-draining`: not accepted, retry); idle sessions are let go at once (in a cluster
 * their leases are released, so another replica takes each on its next request); a
 * session with calls in flight is let go as soon as they are answered. It ends when none
 * is left and every request being placed was answered, or when its window passed; what
 * is left then is let go as in a crash (its calls are answered `request-abandoned` by
 * whoever rebuilds the session).
 */
import type { Session } from '../session/session.js';

export class Drain {
  /** From the drain's start on. */
  active = false;
  /** When the drain's window ends (ms since the epoch): waits for another replica end there too. */
  ends = Infinity;
  /** Requests being placed (found, carried, waiting on an owner): they are answered before the end. */
  #placing = 0;
  /** Requests waiting for a held session that is ending to leave, so they are placed again. */
  readonly #leaving = new Map<Session, Array<() => void>>();

  /** Runs `work` (placing one request), counted. */
  async placing<T>(work: () => Promise<T>): Promise<T> {
    this.#placing++;
    try {
      return await work();
    } finally {
      this.#placing--;
    }
  }

  /** Waits until `session` has ended (true), or `ms` passed (false). */
  leave(session: Session, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const waiting = this.#leaving.get(session) ?? [];
      const resume = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        // Still ending: this waiter gives up, and is forgotten.
        waiting.splice(waiting.indexOf(resume), 1);
        if (waiting.length === 0) this.#leaving.delete(session);
        resolve(false);
      }, ms);
      waiting.push(resume);
      this.#leaving.set(session, waiting);
    });
  }

  /** `session` ended: whoever waits for it goes on. */
  ended(session: Session): void {
    for (const resume of this.#leaving.get(session) ?? []) resume();
    this.#leaving.delete(session);
  }

  /** Is anything running that closing now would cut: a call in flight, a request being placed? */
  busy(sessions: Iterable<Session>): boolean {
    if (this.#placing > 0) return true;
    for (const s of sessions) if (!s.terminated && !s.idle) return true;
    return false;
  }

  /** The drain: true when nothing was left at its end. `sessions` are those held now. */
  async run(drainMs: number, sessions: () => Session[], onError: (error: Error) => void): Promise<boolean> {
    this.active = true;
    const deadline = Date.now() + drainMs;
    this.ends = deadline;
    // Checked every 20 ms rather than hooked into every answer: a drain is rare and short.
    for (;;) {
      const held = sessions();
      for (const s of held) if (s.idle) void s.shutdown().catch(onError);
      if (held.length === 0 && this.#placing === 0) return true;
      if (Date.now() >= deadline) return !this.busy(held);
      await new Promise((resolve) => setTimeout(resolve, Math.min(20, Math.max(1, deadline - Date.now()))));
    }
  }
}
