/**
 * `serve`'s log: one line per notable event (takeover, refusal, divergence, drain, store
 * fault, rebuild), as text or as JSON, each naming the replica and, where there is one, the
 * session and the request. `--quiet` keeps only errors.
 */
import { ContinuityError } from '../protocol/errors.js';
import type { EndpointHooks } from '../telemetry/events.js';

export type LogFormat = 'text' | 'json';
export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

/** One log entry: an event name, its level, and the fields that identify it (the log adds the time and the replica). */
export interface LogFields {
  level: 'info' | 'warn' | 'error';
  event: string;
  message?: string | undefined;
  session?: string | undefined;
  request?: string | number | undefined;
  code?: string | undefined;
  [field: string]: unknown;
}

export interface EventLogOptions {
  format: LogFormat;
  quiet: boolean;
  /** Where a line goes (default: JSON to stdout, text to stderr). */
  write?: ((line: string) => void) | undefined;
}

/** The hooks and the error handler `serve` passes to its endpoint, writing to one log. */
export interface EventLog {
  readonly hooks: EndpointHooks;
  onError: (error: Error) => void;
  /** Names the replica (known once the endpoint exists). */
  setReplica(id: string): void;
  /** Writes `entry` (with `always`, also under `--quiet`). */
  log(entry: LogFields, always?: boolean): void;
}

export function eventLog(options: EventLogOptions): EventLog {
  let replica = '';
  const write = options.write ?? ((line: string) => (options.format === 'json' ? process.stdout : process.stderr).write(`${line}\n`));
  const log = (entry: LogFields, always = false): void => {
    if (options.quiet && !always && entry.level !== 'error') return;
    write(format(options.format, { time: new Date().toISOString(), ...entry, replica }));
  };
  return {
    setReplica: (id) => (replica = id),
    log,
    onError: (error) => {
      const code = error instanceof ContinuityError ? error.code : undefined;
      const fault = code === 'store-unavailable' || code === 'store-fenced';
      log({ level: 'error', event: fault ? 'store-fault' : 'error', code, message: error.message });
    },
    hooks: {
      onRefusal: (e) =>
        log({
          level: 'warn',
          // A refused resume is the server's side of a divergence: the client's history cannot be continued here.
          event: e.lastEventId === undefined ? 'refusal' : 'divergence',
          session: e.sessionId,
          // The client's own JSON-RPC id: any length, any characters; cut here, escaped by format().
          request: typeof e.requestId === 'string' ? e.requestId.slice(0, MAX_FIELD) : e.requestId,
          code: e.code,
          status: e.status,
          method: e.method,
        }),
      onTakeover: (e) => log({ level: 'info', event: 'takeover', session: e.sessionId, token: e.token }),
      onRebuild: (e) => log({ level: 'info', event: 'rebuild', session: e.sessionId }),
      onDrain: (e) => log({ level: 'info', event: 'drain', outcome: e.outcome, sessions: e.sessions, ms: e.durationMs }),
    },
  };
}

/** Longest value of a field a client picks (its request id) that a line keeps. */
const MAX_FIELD = 128;

/** Characters that end or corrupt a line for some reader of the log: controls, NEL, and the Unicode line and paragraph separators. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function format(kind: LogFormat, entry: LogFields & { time: string; replica: string }): string {
  if (kind === 'json') return JSON.stringify(entry).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  const { time, level, event, message, ...fields } = entry;
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${textValue(v)}`);
  return `[mcp-continuity] ${time} ${level} ${event}${rest.length ? ` ${rest.join(' ')}` : ''}${message === undefined ? '' : `: ${escape(String(message))}`}`;
}

/**
 * A field of a text line: bare when it is plain printable ASCII, otherwise quoted and escaped
 * as a JSON string, so a value can neither end the line nor pass for another `key=value`.
 */
function textValue(value: unknown): string {
  const text = String(value);
  return /^[\x21-\x7e]+$/.test(text) && !/["=\\]/.test(text) ? text : escape(JSON.stringify(text));
}

/** `text` with every line-breaking or control character written as `\uXXXX`. */
function escape(text: string): string {
  return text.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
