/** Server processes and proxies for the harness, started once per family. */
import { startChaosProxy, type ChaosProxy, type ConnectionPlan } from '../../../src/chaos/proxy.js';
import { startServerProcess, type ServerProcess } from '../process.js';
import type { Spec } from '../server-process.js';

export type { ServerProcess };

export async function startServer(spec: Spec): Promise<ServerProcess> {
  return startServerProcess(spec as Record<string, unknown>);
}

/** A chaos proxy that can be restarted on its port (to end a stall: every socket is destroyed). */
export class Proxy {
  #proxy!: ChaosProxy;
  #plan: (index: number) => ConnectionPlan = () => ({});
  #cutsBefore = 0;
  readonly #upstream: { host: string; port: number };

  private constructor(upstream: URL) {
    this.#upstream = { host: upstream.hostname, port: Number(upstream.port) };
  }

  static async start(upstream: URL): Promise<Proxy> {
    const p = new Proxy(upstream);
    p.#proxy = await startChaosProxy({ upstream: p.#upstream, plan: (i) => p.#plan(i) });
    return p;
  }

  get url(): URL {
    return new URL(`http://127.0.0.1:${this.#proxy.port}/mcp`);
  }
  get cuts(): number {
    return this.#cutsBefore + this.#proxy.cuts;
  }

  /** Every new connection gets `plan` until one fault has landed; then connections pass. */
  armOnce(plan: ConnectionPlan): void {
    const start = this.cuts;
    this.#plan = () => (this.cuts > start ? {} : plan);
  }

  disarm(): void {
    this.#plan = () => ({});
  }

  /** Destroys every connection (ends a stall) and listens again on the same port. */
  async restart(): Promise<void> {
    const port = this.#proxy.port;
    this.#cutsBefore += this.#proxy.cuts;
    await this.#proxy.close();
    this.#proxy = await startChaosProxy({ upstream: this.#upstream, plan: (i) => this.#plan(i), port });
  }

  close(): Promise<void> {
    return this.#proxy.close();
  }
}
