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
          request: e.requestId,
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

function format(kind: LogFormat, entry: LogFields & { time: string; replica: string }): string {
  if (kind === 'json') return JSON.stringify(entry);
  const { time, level, event, message, ...fields } = entry;
  const rest = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${String(v)}`);
  return `[mcp-continuity] ${time} ${level} ${event}${rest.length ? ` ${rest.join(' ')}` : ''}${message === undefined ? '' : `: ${String(message)}`}`;
}
