/**
 * The workload: clients that run as busy agents do, back to back: a `tally` call (its logs
 * at `warning`, plus ones at `info` the session's level must filter out), then a
 * subscription probe (`update_watched_resource`, whose `resources/updated` must arrive).
 * Ours, the SDK v1 client on its own transport, or the SDK v2 client (connections.ts). Each
 * records what it sent, what it delivered and what it was told into the history.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { WATCHED_RESOURCE_URI } from '../../src/example/index.js';
import { waitFor, within } from '../helpers/wait.js';
import { connect, type Connection } from './connections.js';
import type { ClientKind, History } from './history.js';

/** A request that has not ended after this has hung (the liveness checker's bound), ms. */
export const CALL_TIMEOUT_MS = 45_000;
/** How long a probe waits for `resources/updated` after the update's result, ms. */
const PROBE_MS = 5_000;
/** Calls per worker at most: the loop is bounded in count as well as in time. */
const MAX_CALLS = 300;
const SDK_LOUD = new Set([404, 409, 410]);

export interface WorkerOptions {
  name: string;
  kind: ClientKind;
  url: URL;
  history: History;
  /** Call ids start with it (unique per schedule). */
  idPrefix: string;
  rand: () => number;
  maxSteps: number;
  maxIntervalMs: number;
  /** A guarantee switched off on purpose (mutation check on a real cluster), see {@link Mutation}. */
  mutation?: Mutation | undefined;
}

/**
 * A guarantee broken on purpose, so that a run proves its checker finds the violation:
 * - `double-run`: after each successful call the client sends it again under the same id
 *   (a naive retry): the server runs it twice (at-most-once);
 * - `level`: the client asks for `info` instead of `warning`, so the logs a kept level
 *   filters arrive (graceful, ungraceful);
 * - `drop-log`: the second log of every call is lost on the way (divergence);
 * - `hang`: the client's third call never ends as far as the history knows (liveness).
 */
export type Mutation = 'double-run' | 'level' | 'drop-log' | 'hang';
export const MUTATIONS: readonly Mutation[] = ['double-run', 'level', 'drop-log', 'hang'];

/** What an error says, as the checkers name it. */
export function classify(error: unknown): { code: string; message: string } {
  const e = error as { code?: unknown; data?: { reason?: unknown }; message?: unknown };
  const message = String(e?.message ?? error);
  if (typeof e?.data?.reason === 'string') return { code: e.data.reason, message };
  // The SDK's transport puts a refusal's body in its message: the reason is in there.
  const body = /\{"jsonrpc".*\}/s.exec(message)?.[0];
  const reason = body === undefined ? undefined : parseReason(body);
  if (reason !== undefined) return { code: reason, message };
  if (e?.code === -32001 || e?.code === 'REQUEST_TIMEOUT') return { code: 'timeout', message };
  // Our transport's own typed errors (they carry an HTTP status too, which is not the point).
  if ((e as { name?: unknown }).name === 'ContinuityError' && typeof e.code === 'string') return { code: e.code, message };
  // The v2 SDK's HTTP failures carry the status apart from their (string) code.
  const status = (e as { status?: unknown }).status;
  if (typeof status === 'number' && status >= 400) return { code: SDK_LOUD.has(status) ? `http-${status}` : 'unavailable', message };
  if (e?.code === 'CONNECTION_CLOSED' || e?.code === 'SEND_FAILED') return { code: 'network', message };
  if (typeof e?.code === 'string') return { code: e.code, message };
  if (typeof e?.code === 'number' && e.code >= 400 && e.code < 600) return { code: SDK_LOUD.has(e.code) ? `http-${e.code}` : 'unavailable', message };
  if (/HTTP 50[234]\b/.test(message)) return { code: 'unavailable', message };
  if (/fetch failed|ECONNRESET|ECONNREFUSED|terminated|socket|disconnected|aborted/i.test(message)) return { code: 'network', message };
  return { code: 'other', message };
}

function parseReason(body: string): string | undefined {
  try {
    const reason = (JSON.parse(body) as { error?: { data?: { reason?: unknown } } }).error?.data?.reason;
    return typeof reason === 'string' ? reason : undefined;
  } catch {
    return undefined;
  }
}

/** After a failed call an agent waits this long before the next (its retry delay: schedule, not a wait). */
const RETRY_DELAY_MS = 100;

export class Worker {
  readonly #o: WorkerOptions;
  #client: Connection | undefined;
  #updates = 0;
  #stopped = false;
  /** Set when the session was lost: state (level, subscription) must be set up again. */
  #fresh = true;
  calls = 0;
  /** Whether its loop ended (stopped, or at its bound of calls). */
  finished = false;
  readonly done: Promise<void>;

  constructor(options: WorkerOptions) {
    this.#o = options;
    this.done = this.#run()
      .catch((error: unknown) => {
        options.history.add({ type: 'told', client: options.name, code: `worker-crashed: ${String(error).slice(0, 120)}` });
      })
      .finally(() => (this.finished = true));
  }

  stop(): void {
    this.#stopped = true;
  }

  #connect(): Promise<Connection> {
    const { name, kind, url, history } = this.#o;
    return connect(
      kind,
      url,
      `lifecycle-${name}`,
      {
        log: (logger, raw) => {
          const data = raw as { id?: unknown; seq?: unknown; filtered?: unknown } | undefined;
          if (logger !== 'tally' || typeof data?.id !== 'string' || typeof data.seq !== 'number') return;
          if (this.#o.mutation === 'drop-log' && data.seq === 2) return;
          history.add({ type: 'note', client: name, call: data.id, seq: data.seq, filtered: data.filtered === true });
        },
        updated: () => void this.#updates++,
        divergence: (r) => {
          history.add({ type: 'told', client: name, code: r.code });
          this.#fresh = true;
        },
      },
      CALL_TIMEOUT_MS,
    );
  }

  /** Log level and subscription, then updates until one is heard (the standalone stream is up). */
  async #setUp(client: Connection): Promise<void> {
    await client.setLoggingLevel(this.#o.mutation === 'level' ? 'info' : 'warning', CALL_TIMEOUT_MS);
    await client.subscribe(WATCHED_RESOURCE_URI, CALL_TIMEOUT_MS);
    for (let i = 0; i < 10 && !this.#stopped; i++) {
      if (await this.#probe(client, 500)) return;
    }
    this.#o.history.add({ type: 'probe', client: this.#o.name, what: 'subscription', ok: false });
  }

  /** True when `resources/updated` followed an update within `ms`; undefined if the update itself failed. */
  async #probe(client: Connection, ms: number): Promise<boolean | undefined> {
    const before = this.#updates;
    try {
      await client.callTool('update_watched_resource', {}, CALL_TIMEOUT_MS);
    } catch {
      return undefined; // inconclusive: the nemesis may have ended the update itself
    }
    return waitFor(() => this.#updates > before, 'resources/updated', ms).then(
      () => true,
      () => false,
    );
  }

  async #run(): Promise<void> {
    const { name, kind, history, idPrefix, rand, maxSteps, maxIntervalMs } = this.#o;
    for (let n = 0; n < MAX_CALLS && !this.#stopped; n++) {
      if (this.#client === undefined || this.#fresh) {
        // Setting a session up is a request like any other: recorded as a call of no steps.
        const setup = `${idPrefix}${name}-setup${n}`;
        history.add({ type: 'invoke', client: name, kind, call: setup, steps: 0 });
        this.#fresh = false;
        try {
          this.#client ??= await this.#connect();
          await this.#setUp(this.#client);
          history.add({ type: 'ok', client: name, call: setup });
        } catch (error) {
          const { code, message } = classify(error);
          history.add({ type: 'fail', client: name, call: setup, code, message });
          await delay(RETRY_DELAY_MS);
          // Connect again from scratch (the loop bounds the attempts).
          await this.#drop();
          continue;
        }
      }
      const client = this.#client;
      const call = `${idPrefix}${name}-${n}`;
      const steps = 1 + Math.floor(rand() * maxSteps);
      const intervalMs = Math.floor(rand() * maxIntervalMs);
      history.add({ type: 'invoke', client: name, kind, call, steps });
      this.calls++;
      try {
        await client.callTool('tally', { id: call, steps, intervalMs }, CALL_TIMEOUT_MS);
        if (this.#o.mutation !== 'hang' || n !== 2) history.add({ type: 'ok', client: name, call });
        if (this.#o.mutation === 'double-run') await client.callTool('tally', { id: call, steps: 0 }, CALL_TIMEOUT_MS).catch(() => {});
      } catch (error) {
        const { code, message } = classify(error);
        history.add({ type: 'fail', client: name, call, code, message });
        await delay(RETRY_DELAY_MS);
        if (kind !== 'ours' && code.startsWith('http-')) {
          // The SDK's transport does not re-initialize by itself: the agent does.
          history.add({ type: 'told', client: name, code });
          await this.#drop();
          continue;
        }
      }
      const heard = await this.#probe(client, PROBE_MS);
      if (heard !== undefined && !this.#fresh) history.add({ type: 'probe', client: name, what: 'subscription', ok: heard });
    }
  }

  async #drop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#fresh = true;
    await within(client?.close() ?? Promise.resolve(), 'closing a client', 5_000).catch(() => {});
  }

  /** Stops after the current call and closes the client. */
  async close(): Promise<void> {
    this.stop();
    await within(this.done, `worker ${this.#o.name} to finish its call`, CALL_TIMEOUT_MS * 3);
    await this.#drop();
  }
}
