/** `mcp-continuity serve`'s options: parsed and checked before anything is opened. */
import { parseArgs } from 'node:util';
import { DEFAULT_DRAIN_MS } from '../server/endpoint-api.js';
import { UsageError } from './usage.js';
import { LOG_FORMATS, type LogFormat } from './event-log.js';
import { parseHostPort } from './ops-server.js';

/** The store `serve` uses when none is named: SQLite, the embedded default. */
export const DEFAULT_STORE = 'sqlite:./mcp-continuity.db';

/** `serve`'s command line, every value checked. */
export interface ServeOptions {
  readonly port: number;
  readonly host: string;
  readonly path: string;
  /** The `--store` spec as given (it may hold a password: redact before printing). */
  readonly store: string;
  readonly json: boolean;
  readonly websocket: boolean;
  readonly quiet: boolean;
  readonly allowedHosts: string[];
  readonly format: LogFormat;
  readonly metricsAt: { host: string; port: number } | undefined;
  readonly unreadyMs: number;
  readonly drainMs: number;
}

/** Parses `serve`'s arguments; throws a {@link UsageError} naming the first bad one. */
export function parseServeOptions(argv: string[]): ServeOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string', default: '3000' },
      host: { type: 'string', default: '127.0.0.1' },
      path: { type: 'string', default: '/mcp' },
      store: { type: 'string', default: DEFAULT_STORE },
      json: { type: 'boolean', default: false },
      websocket: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      'allowed-hosts': { type: 'string', default: '' },
      metrics: { type: 'string' },
      'log-format': { type: 'string', default: 'text' },
      'unready-ms': { type: 'string', default: '0' },
      'drain-ms': { type: 'string', default: String(DEFAULT_DRAIN_MS) },
    },
    strict: true,
  });
  // Number('') is 0: without this an empty --port would silently pick a random port.
  if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535)
    throw new UsageError(`--port must be an integer 0-65535, got ${JSON.stringify(values.port)}`, 'serve');
  // The path is joined to the origin as it is: without its slash, `mcp` would make no URL at all.
  if (!/^\/[^\s?#]*$/.test(values.path)) throw new UsageError(`--path must start with / (e.g. /mcp), got ${JSON.stringify(values.path)}`, 'serve');
  if (!/^\d{1,7}$/.test(values['drain-ms']))
    throw new UsageError(`--drain-ms must be an integer number of milliseconds, got ${JSON.stringify(values['drain-ms'])}`, 'serve');
  const allowedHosts = values['allowed-hosts']
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  if (allowedHosts.some((h) => /[\s/@]/.test(h)))
    throw new UsageError(`--allowed-hosts takes host names or host:port, comma-separated; got ${JSON.stringify(values['allowed-hosts'])}`, 'serve');
  const format = values['log-format'] as LogFormat;
  if (!LOG_FORMATS.includes(format))
    throw new UsageError(`--log-format takes ${LOG_FORMATS.join(' or ')}, got ${JSON.stringify(values['log-format'])}`, 'serve');
  const metricsAt = values.metrics === undefined ? undefined : parseHostPort(values.metrics);
  if (!/^\d{1,7}$/.test(values['unready-ms']))
    throw new UsageError(`--unready-ms must be an integer number of milliseconds, got ${JSON.stringify(values['unready-ms'])}`, 'serve');
  return {
    port: Number(values.port),
    host: values.host,
    path: values.path,
    store: values.store,
    json: values.json,
    websocket: values.websocket,
    quiet: values.quiet,
    allowedHosts,
    format,
    metricsAt,
    unreadyMs: Number(values['unready-ms']),
    drainMs: Number(values['drain-ms']),
  };
}
