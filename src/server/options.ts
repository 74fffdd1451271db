/**
 * Endpoint options, their defaults, and validation. Every option is checked here, before
 * anything is built: a number out of range throws a RangeError, a value of the wrong kind a
 * TypeError, each naming the option (the convention of the stores' options too).
 */
import type { RetentionOptions, Store } from '../store/types.js';
import type { HostGuardOptions } from './host-guard.js';
import type { ClusterOptions } from './cluster/options.js';
import type { HandleContext, SdkServerLike, ServerFactory, SessionContext } from './session/context.js';
import type { EndpointLimits } from './stream/limits.js';
import type { UpgradeOptions } from './upgrade/options.js';
import type { EndpointHooks } from '../telemetry/events.js';
import type { ModernHandler } from './eras.js';
import { randomToken } from '../protocol/crypto.js';
import { ProcessState, defaultProcess } from './stream/process.js';
import { DEFAULT_LIMITS, resolveLimits, type ResolvedLimits } from './stream/limits.js';

export type { ClusterOptions, EndpointLimits, HandleContext, SdkServerLike, ServerFactory, SessionContext, UpgradeOptions };
export { DEFAULT_LIMITS, resolveLimits, type ResolvedLimits };

/**
 * Options of {@link createEndpoint}. The hooks (`onResume`, `onRefusal`, `onTakeover`,
 * `onRebuild`, `onPassivation`, `onDrain`) get the events the metrics count (docs/operations.md).
 */
export interface EndpointOptions extends EndpointHooks {
  /** A fresh official-SDK server per session. */
  server: ServerFactory;
  /**
   * Can this server's sessions be rebuilt (after a restart, a passivation, a takeover)?
   * Default true: a rebuilt session gets its `initialize`, its lasting requests (log level,
   * resource subscriptions) and its saved application state (`SessionContext.saveState`)
   * back. `false` declares that the server holds per-session state it cannot restore: such
   * sessions are never passivated, and one that lost its server is ended and answered 404
   * `session-not-rebuildable`, so its client re-initializes instead of continuing without
   * its state. A factory can also refuse one rebuild by throwing that error.
   */
  rebuildable?: boolean | undefined;
  /** Where sessions and event logs live (default: a memory store). */
  store?: Store | undefined;
  /** Retention of the default memory store (ignored when `store` is given). */
  retention?: RetentionOptions | undefined;
  limits?: EndpointLimits | undefined;
  /** Answer POSTs with JSON instead of SSE. Server→client messages then go on the GET stream. */
  jsonResponse?: boolean | undefined;
  /** `retry:` sent to 2025-11-25 clients with the priming event and before a server-side close, ms (default 1000). */
  retryMs?: number | undefined;
  /** SSE comment sent on idle live streams, ms (default 15,000; 0 turns it off). */
  keepAliveMs?: number | undefined;
  /** The opt-in SSE→WebSocket upgrade (docs/design.md §4). Off by default. */
  upgrade?: UpgradeOptions | undefined;
  /** Host/Origin validation (DNS rebinding). The Node adapter turns it on for loopback binds. */
  hostGuard?: HostGuardOptions | false | undefined;
  /** Session ID generator; must return ≥ 128 bits of CSPRNG output as visible ASCII. */
  sessionId?: (() => string) | undefined;
  /** Errors that have no caller to go to (store failures in the background, SDK errors). */
  onError?: ((error: Error) => void) | undefined;
  /** Clock, for tests. */
  now?: (() => number) | undefined;
  /**
   * Several replicas sharing one store. On by default when the store is shared between
   * processes (Redis); `enabled: true` also turns it on for endpoints sharing one store
   * object in a process (memory, SQLite), which is how the protocol is tested in-process.
   */
  cluster?: ClusterOptions | undefined;
  /**
   * The 2026-07-28 leg on the same URL: `createMcpHandler(factory, { legacy: 'reject' })`
   * of the official SDK v2. Requests its `isLegacyRequest` classifies as 2025-era get our
   * sessions; all others go to this handler (docs/design.md, "Two protocol eras").
   */
  modern?: ModernHandler | undefined;
  /**
   * Where the endpoint counts what it shares with the rest of the process: the producers'
   * turn budget, request admission, the bytes queued for readers (`maxBufferedBytesTotal`)
   * and the request bodies being received (`maxBodyBytesTotal`). Default: `defaultProcess`,
   * shared by every endpoint of this copy of the package. Give an endpoint its own
   * `new ProcessState()` to isolate it (a tenant, a test); its totals then no longer see
   * the other endpoints'.
   */
  process?: ProcessState | undefined;
}

/** `retry:` sent to 2025-11-25 clients by default, ms. */
export const DEFAULT_RETRY_MS = 1000;
/** Idle time before an SSE keep-alive comment by default, ms. */
export const DEFAULT_KEEP_ALIVE_MS = 15_000;
/** How long an upgrade offer stays valid by default, ms. */
export const DEFAULT_UPGRADE_EXPIRES_MS = 10_000;
/** Upgrade offers pending at once in this process by default. */
export const DEFAULT_MAX_PENDING_UPGRADES = 100;

/** The upgrade options with their defaults. */
export interface ResolvedUpgrade {
  readonly websocket: boolean;
  readonly expiresInMs: number;
  readonly maxPending: number;
}

/** {@link EndpointOptions} with every default filled in and every value checked. */
export interface ResolvedEndpointOptions {
  readonly limits: ResolvedLimits;
  readonly rebuildable: boolean;
  readonly jsonResponse: boolean;
  readonly retryMs: number;
  readonly keepAliveMs: number;
  readonly upgrade: ResolvedUpgrade;
  readonly now: () => number;
  readonly process: ProcessState;
  readonly newSessionId: () => string;
  /** `onError`, made safe to call: a hook that throws must not end the process. */
  readonly onError: (error: Error) => void;
}

type Check = (value: unknown) => boolean;
const isBoolean: Check = (v) => typeof v === 'boolean';
const isFunction: Check = (v) => typeof v === 'function';
const isObject: Check = (v) => typeof v === 'object' && v !== null;
const isNonNegativeInteger: Check = (v) => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isNonNegative: Check = (v) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isPositive: Check = (v) => typeof v === 'number' && Number.isFinite(v) && v > 0;

/** What each optional option must be when given: its test, the error's kind, and what to say. */
const RULES: ReadonlyArray<readonly [path: string, check: Check, error: 'type' | 'range', expected: string]> = [
  ['rebuildable', isBoolean, 'type', 'a boolean'],
  ['store', isObject, 'type', 'a store'],
  ['retention', isObject, 'type', 'an object'],
  ['limits', isObject, 'type', 'an object'],
  ['jsonResponse', isBoolean, 'type', 'a boolean'],
  // The SSE `retry:` field is a whole number of ms.
  ['retryMs', isNonNegativeInteger, 'range', 'a whole number >= 0'],
  ['keepAliveMs', isNonNegative, 'range', 'a finite number >= 0 (0: off)'],
  ['upgrade', isObject, 'type', 'an object'],
  ['upgrade.websocket', isBoolean, 'type', 'a boolean'],
  ['upgrade.expiresInMs', isPositive, 'range', 'a positive finite number'],
  ['upgrade.maxPending', isNonNegativeInteger, 'range', 'a whole number >= 0 (0: no offers)'],
  ['hostGuard', (v) => v === false || isObject(v), 'type', 'false or an object'],
  ['sessionId', isFunction, 'type', 'a function'],
  ['onError', isFunction, 'type', 'a function'],
  ['now', isFunction, 'type', 'a function'],
  ['cluster', isObject, 'type', 'an object'],
  ['process', (v) => v instanceof ProcessState, 'type', 'a ProcessState'],
  ['modern', (v) => isObject(v) && typeof (v as { fetch?: unknown }).fetch === 'function', 'type', 'a handler with fetch()'],
  ...(['onResume', 'onRefusal', 'onTakeover', 'onRebuild', 'onPassivation', 'onDrain'] as const).map(
    (hook) => [hook, isFunction, 'type', 'a function'] as const,
  ),
];

function valueAt(options: object, path: string): unknown {
  let value: unknown = options;
  for (const key of path.split('.')) value = isObject(value) ? (value as Record<string, unknown>)[key] : undefined;
  return value;
}

/**
 * Checks every option of {@link createEndpoint} and fills in the defaults. Throws a
 * TypeError or RangeError naming the first option that is wrong; an option given as
 * `undefined` takes its default. (`cluster` and `retention` are checked further where they
 * are resolved, by the cluster and the memory store.)
 */
export function resolveEndpointOptions(options: EndpointOptions): ResolvedEndpointOptions {
  if (!isObject(options)) throw new TypeError('createEndpoint: options must be an object with a server factory');
  if (typeof options.server !== 'function') throw new TypeError('createEndpoint: server must be a function returning an SDK server');
  for (const [path, check, error, expected] of RULES) {
    const value = valueAt(options, path);
    if (value === undefined || check(value)) continue;
    const message = `createEndpoint: ${path} must be ${expected}, got ${typeof value === 'number' ? String(value) : typeof value}`;
    throw error === 'range' && typeof value === 'number' ? new RangeError(message) : new TypeError(message);
  }
  return {
    limits: resolveLimits(options.limits),
    rebuildable: options.rebuildable ?? true,
    jsonResponse: options.jsonResponse ?? false,
    retryMs: options.retryMs ?? DEFAULT_RETRY_MS,
    keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    upgrade: {
      websocket: options.upgrade?.websocket ?? false,
      expiresInMs: options.upgrade?.expiresInMs ?? DEFAULT_UPGRADE_EXPIRES_MS,
      maxPending: options.upgrade?.maxPending ?? DEFAULT_MAX_PENDING_UPGRADES,
    },
    now: options.now ?? Date.now,
    process: options.process ?? defaultProcess,
    newSessionId: options.sessionId ?? (() => randomToken(24)),
    onError: safeHook(options.onError),
  };
}

/** A throwing onError must not become an unhandled rejection that ends the process. */
function safeHook(report: ((error: Error) => void) | undefined): (error: Error) => void {
  return (error) => {
    try {
      report?.(error);
    } catch {
      // Nowhere left to report it.
    }
  };
}
