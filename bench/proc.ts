/** The parent's handle on one benchmark server process (see `./server.ts`). */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ServerOptions, ServerRequest, ServerStats } from './server.js';
import type { Contender } from './workload.js';

const SERVER = fileURLToPath(new URL('./server.ts', import.meta.url));

export interface ServerProcess {
  readonly contender: Contender;
  readonly url: URL;
  /** Does the endpoint have `limits.passivateAfterMs`? */
  readonly passivation: boolean;
  reset(): Promise<void>;
  stats(): Promise<ServerStats>;
  /** RSS and heap after a full GC. */
  gc(): Promise<{ rss: number; heapUsed: number }>;
  close(): Promise<void>;
}

/** `script` runs another checkout's server (A/B of two commits, as `./telemetry-ab.ts` does). */
export async function startServer(contender: Contender, options: ServerOptions = {}, script: string = SERVER): Promise<ServerProcess> {
  const child: ChildProcess = fork(script, [contender, JSON.stringify(options)], {
    // BENCH_CPU_PROF=<dir> writes a V8 CPU profile of each server process there.
    execArgv: [
      '--import',
      'tsx',
      '--expose-gc',
      '--max-old-space-size=8192',
      ...(process.env.BENCH_NODE_ARGS ? process.env.BENCH_NODE_ARGS.split(' ') : []),
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(type: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (m: { type: string } & T): void => {
        if (m.type !== type) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(m);
      };
      const onExit = (code: number | null): void => reject(new Error(`${contender} server exited (${code}) while waiting for ${type}`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ask = <T>(request: ServerRequest): Promise<T> => {
    const answer = next<T>(request.type);
    child.send(request);
    return answer;
  };
  const ready = await next<{ url: string; passivation: boolean }>('ready');
  return {
    contender,
    url: new URL(ready.url),
    passivation: ready.passivation,
    reset: () => ask<unknown>({ type: 'reset' }).then(() => undefined),
    stats: () => ask<{ stats: ServerStats }>({ type: 'stats' }).then((m) => m.stats),
    gc: () => ask<{ rss: number; heapUsed: number }>({ type: 'gc' }),
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
