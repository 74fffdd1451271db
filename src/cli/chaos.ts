/** `mcp-continuity chaos`: the HTTP fault-injecting proxy from the command line. */
import { parseArgs } from 'node:util';
import { startHttpChaosProxy } from '../chaos/http-proxy.js';
import { StartupError, UsageError } from './usage.js';

function count(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(text)}`, 'chaos');
  return Number(text);
}

/** Starts the proxy; resolves once it listens (the process then runs until a signal). */
export async function chaos(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      target: { type: 'string', multiple: true, default: [] },
      port: { type: 'string', default: '0' },
      host: { type: 'string', default: '127.0.0.1' },
      seed: { type: 'string' },
      'cut-after-events': { type: 'string' },
      'cut-after-bytes': { type: 'string' },
      'cut-probability': { type: 'string', default: '1' },
      mode: { type: 'string', default: 'fin' },
      delay: { type: 'string', default: '0' },
    },
    strict: true,
  });
  if (values.target.length === 0) throw new UsageError('chaos needs at least one --target URL, e.g. --target http://127.0.0.1:3000', 'chaos');
  const targets = values.target.map((t) => {
    if (!URL.canParse(t) || !/^https?:$/.test(new URL(t).protocol)) throw new UsageError(`--target must be an http URL, got ${JSON.stringify(t)}`, 'chaos');
    return new URL(t);
  });
  if (!['fin', 'rst', 'stall'].includes(values.mode)) throw new UsageError(`--mode must be fin, rst or stall, got ${JSON.stringify(values.mode)}`, 'chaos');
  const probability = Number(values['cut-probability']);
  if (!(probability >= 0 && probability <= 1))
    throw new UsageError(`--cut-probability must be between 0 and 1, got ${JSON.stringify(values['cut-probability'])}`, 'chaos');
  const port = count(values.port, '--port') ?? 0;
  const seed = count(values.seed, '--seed') ?? Math.floor(Math.random() * 2 ** 31);
  const proxy = await startHttpChaosProxy({
    targets,
    host: values.host,
    port,
    seed,
    cutAfterEvents: count(values['cut-after-events'], '--cut-after-events'),
    cutAfterBytes: count(values['cut-after-bytes'], '--cut-after-bytes'),
    cutProbability: probability,
    mode: values.mode as 'fin' | 'rst' | 'stall',
    delayMs: count(values.delay, '--delay'),
    onFault: (f) => console.log(`fault: request ${f.request} to ${f.target}: ${f.kind} after ${f.events} event${f.events === 1 ? '' : 's'}, ${f.bytes} bytes`),
  }).catch((error: NodeJS.ErrnoException) => {
    throw new StartupError(
      error.code === 'EADDRINUSE' ? `port ${port} is already in use: pick another with --port (0 picks a free one)` : `cannot listen: ${error.message}`,
    );
  });
  console.log(`${proxy.url.href} → ${targets.map((t) => t.host).join(', ')} (seed ${seed})`);
  const stop = (): void => void proxy.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
