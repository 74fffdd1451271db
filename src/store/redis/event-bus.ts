/**
 * The SDK v2's `ServerEventBus` on the Redis store's sharded pub/sub: a change published on
 * one replica (`tools/list_changed`, …) reaches the `subscriptions/listen` streams open on
 * every replica sharing the store. Listeners of this process hear it at once; the other
 * processes through one channel, which each bus subscribes to once.
 *
 * Delivery across processes is at most once, as pub/sub is: an event published while a
 * replica is disconnected from Redis does not reach that replica's streams. The modern
 * revision has no resumption to make up for it; its clients re-list after reconnecting.
 */
import { toError, ContinuityError } from '../../protocol/errors.js';
import { randomBytes } from 'node:crypto';
import type { Store } from '../types.js';
import { RedisBus } from './bus.js';

/** A change event of the modern leg (the SDK's `ServerEvent`, structurally). */
export type ChangeEvent =
  | ({ kind: 'tools_list_changed' | 'prompts_list_changed' | 'resources_list_changed' } & { params?: Record<string, unknown> })
  | ({ kind: 'resource_updated'; uri: string } & { params?: Record<string, unknown> });

/** The SDK's `ServerEventBus`, plus `close`. */
export interface RedisServerEventBus {
  publish(event: ChangeEvent): void;
  subscribe(listener: (event: ChangeEvent) => void): () => void;
  /** Stops listening on Redis; listeners of this process hear nothing more from others. */
  close(): Promise<void>;
}

/** Options of {@link redisServerEventBus}. */
export interface RedisServerEventBusOptions {
  /** Replicas sharing a name share events (default `default`): one name per application. */
  name?: string | undefined;
  /** A publish that failed, a listener that threw, a malformed message (never thrown). */
  onError?: ((error: Error) => void) | undefined;
}

/** Largest event carried between replicas, bytes of JSON; larger ones stay local (and are reported). */
export const MAX_CHANGE_EVENT_BYTES = 64 * 1024;
const KINDS = new Set(['tools_list_changed', 'prompts_list_changed', 'resources_list_changed', 'resource_updated']);

/**
 * A `ServerEventBus` for `createMcpHandler(factory, { bus })` over a Redis store.
 *
 * @example
 * ```ts
 * const store = await redisStore({ url: 'redis://127.0.0.1:6379' });
 * const bus = await redisServerEventBus(store);
 * const modern = createMcpHandler(factory, { legacy: 'reject', bus });
 * ```
 */
export async function redisServerEventBus(store: Store, options: RedisServerEventBusOptions = {}): Promise<RedisServerEventBus> {
  if (!(store.bus instanceof RedisBus)) throw new TypeError('redisServerEventBus: the store is not a Redis store');
  const name = options.name ?? 'default';
  if (typeof name !== 'string' || name.length === 0 || name.length > 200 || /[{}]/.test(name)) {
    throw new TypeError('redisServerEventBus: name must be a non-empty string of at most 200 characters without { or }');
  }
  const redis = store.bus;
  const report = (error: unknown): void => {
    try {
      options.onError?.(toError(error));
    } catch {
      // Nowhere left to report it.
    }
  };
  // Our own messages come back from Redis: recognised by this tag and skipped.
  const self = randomBytes(9).toString('base64url');
  const listeners = new Set<(event: ChangeEvent) => void>();
  const deliver = (event: ChangeEvent): void => {
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch (error) {
        report(error);
      }
    }
  };
  const unsubscribe = await redis.subscribeChanges(name, (message) => {
    const parsed = decode(message);
    if (parsed === undefined) return report(new ContinuityError('bus-event-dropped', 'redisServerEventBus: ignored a malformed change event'));
    if (parsed.from !== self) deliver(parsed.event);
  });
  let closed = false;
  return {
    publish(event) {
      deliver(event);
      if (closed) return;
      const message = JSON.stringify({ from: self, event });
      if (Buffer.byteLength(message) > MAX_CHANGE_EVENT_BYTES) {
        return report(
          new ContinuityError('bus-event-dropped', `redisServerEventBus: an event over ${MAX_CHANGE_EVENT_BYTES} bytes was delivered on this replica only`),
        );
      }
      redis.publishChange(name, message).catch(report);
    },
    subscribe(listener) {
      const entry = (event: ChangeEvent): void => listener(event);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      await unsubscribe();
    },
  };
}

/** A message of another replica, or undefined when it is not one. */
function decode(message: string): { from: string; event: ChangeEvent } | undefined {
  if (message.length > MAX_CHANGE_EVENT_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { from, event } = value as { from?: unknown; event?: unknown };
  if (typeof from !== 'string' || typeof event !== 'object' || event === null) return undefined;
  const { kind, uri, params } = event as { kind?: unknown; uri?: unknown; params?: unknown };
  if (typeof kind !== 'string' || !KINDS.has(kind)) return undefined;
  if (kind === 'resource_updated' && typeof uri !== 'string') return undefined;
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return undefined;
  return { from, event: event as ChangeEvent };
}
