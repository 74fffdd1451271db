/**
 * The Redis store's bus, on sharded pub/sub (SSUBSCRIBE/SPUBLISH): a session's notices go
 * to the shard owning its slot, so notices scale with the cluster instead of being
 * broadcast to every node. Works the same on a standalone Redis 7.
 *
 * Append notices are published by the store's append and close scripts themselves
 * (atomically with the write). Pub/sub delivers at most once: a notice sent while a
 * subscriber is disconnected is lost, so a tailer treats notices as hints and the log as
 * the truth.
 */
import { reportListenerError } from '../local-cluster.js';
import type { Keys } from './keys.js';
import type { Link, Listener } from './link.js';
import type { AppendNotice, ClusterBus, Unsubscribe } from '../types.js';

export class RedisBus implements ClusterBus {
  readonly #link: Link;
  readonly #keys: Keys;

  /** Append listeners by session, to tell them to re-read after a reconnection. */
  readonly #tailers = new Map<string, Set<(notice: AppendNotice) => void>>();

  constructor(link: Link, keys: Keys) {
    this.#link = link;
    this.#keys = keys;
    link.onReconnect(() => {
      for (const [session, listeners] of this.#tailers) {
        for (const listener of [...listeners]) safely(listener, { session, stream: '', lastSeq: -1, closed: false, resync: true });
      }
    });
  }

  async publishAppend(session: string, stream: string, lastSeq: number): Promise<void> {
    const channel = this.#keys.tail(session);
    await this.#link.command(channel, ['SPUBLISH', channel, `${lastSeq} 0 ${stream}`]);
  }

  async subscribeAppends(session: string, listener: (notice: AppendNotice) => void): Promise<Unsubscribe> {
    const unsubscribe = await this.#subscribe(this.#keys.tail(session), (message) => {
      const notice = parseNotice(session, message);
      if (notice) listener(notice);
    });
    let set = this.#tailers.get(session);
    if (!set) this.#tailers.set(session, (set = new Set()));
    const entry = (notice: AppendNotice): void => listener(notice);
    set.add(entry);
    return async () => {
      const current = this.#tailers.get(session);
      current?.delete(entry);
      if (current?.size === 0) this.#tailers.delete(session);
      await unsubscribe();
    };
  }

  onReconnect(listener: () => void): void {
    this.#link.onReconnect(listener);
  }

  async sendToOwner(owner: string, message: string): Promise<number> {
    const channel = this.#keys.inbox(owner);
    return Number(await this.#link.command(channel, ['SPUBLISH', channel, message]));
  }

  async subscribeInbox(owner: string, listener: (message: string) => void): Promise<Unsubscribe> {
    return this.#subscribe(this.#keys.inbox(owner), listener);
  }

  /** Publishes on the store's channel named `name` (the modern leg's change events). */
  async publishChange(name: string, message: string): Promise<void> {
    const channel = this.#keys.changes(name);
    await this.#link.command(channel, ['SPUBLISH', channel, message]);
  }

  /** Listens on the store's channel named `name`. */
  async subscribeChanges(name: string, listener: (message: string) => void): Promise<Unsubscribe> {
    return this.#subscribe(this.#keys.changes(name), listener);
  }

  async #subscribe(channel: string, listener: (message: string) => void): Promise<Unsubscribe> {
    // One wrapper per subscription: node-redis keys listeners by identity.
    const entry: Listener = (message) => safely(listener, message);
    await this.#link.sSubscribe(channel, entry);
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      await this.#link.sUnsubscribe(channel, entry);
    };
  }
}

function safely<T>(listener: (value: T) => void, value: T): void {
  try {
    listener(value);
  } catch (error) {
    reportListenerError(error);
  }
}

/** `"<lastSeq> <0|1> <stream>"`; undefined for anything else. */
export function parseNotice(session: string, message: string): AppendNotice | undefined {
  const a = message.indexOf(' ');
  const b = message.indexOf(' ', a + 1);
  if (a <= 0 || b !== a + 2) return undefined;
  const lastSeq = Number(message.slice(0, a));
  if (!Number.isSafeInteger(lastSeq)) return undefined;
  return { session, stream: message.slice(b + 1), lastSeq, closed: message[a + 1] === '1' };
}
