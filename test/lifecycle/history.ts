/**
 * The recorded history of one lifecycle schedule, in the manner of Jepsen: every client
 * operation (invoke, then ok or fail), every tally log a client delivered, every time a
 * client was told its session diverged or ended, every state probe, every nemesis
 * operation, and at the end the server-side run count of each call. Plain JSON, so a
 * history can be stored as a fixture and altered by the mutation checks.
 */

/** The clients the workload runs: ours (ContinuityClientTransport) and the SDK's own transports. */
export type ClientKind = 'ours' | 'sdk1' | 'sdk2';

export type Event =
  /** A call sent (`steps` warning logs expected before its result). */
  | { t: number; type: 'invoke'; client: string; kind: ClientKind; call: string; steps: number }
  | { t: number; type: 'ok'; client: string; call: string }
  /** `code`: the refusal's reason (`request-abandoned`, `session-not-found`…), `http-404`, `unavailable`, `network`, `timeout`. */
  | { t: number; type: 'fail'; client: string; call: string; code: string; message: string }
  /** A tally log the client delivered to the application (`filtered`: one its log level should have filtered out). */
  | { t: number; type: 'note'; client: string; call: string; seq: number; filtered: boolean }
  /** The client was told its session diverged or ended (a divergence report, or 404/409/410 then re-initialization). */
  | { t: number; type: 'told'; client: string; code: string }
  /** A state probe: the session's subscription still notifies (`ok`), or it stayed silent. */
  | { t: number; type: 'probe'; client: string; what: 'subscription'; ok: boolean }
  /** A nemesis operation begins / ends; `graceful`: SIGTERM or a new replica. */
  | { t: number; type: 'nemesis'; phase: 'start' | 'end'; op: string; graceful: boolean; detail: string; outcome?: string | undefined }
  /** No replica is listening (between a single replica's exit and its replacement), or one is again. */
  | { t: number; type: 'gap'; open: boolean }
  /** How many times the server ran the call (from the tally file, after the run). */
  | { t: number; type: 'runs'; call: string; count: number };

export type EventType = Event['type'];

/** An append-only history with a monotonic clock starting at 0. */
export class History {
  readonly events: Event[] = [];
  readonly #start = performance.now();

  now(): number {
    return Math.round((performance.now() - this.#start) * 10) / 10;
  }

  /** Records `event` at the current time. */
  add(event: DistributiveOmit<Event, 't'>): void {
    this.events.push({ t: this.now(), ...event });
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** One line per event, for the short history a failure prints. */
export function formatEvent(e: Event): string {
  const t = `${e.t.toFixed(0).padStart(6)} ms`;
  switch (e.type) {
    case 'invoke':
      return `${t}  ${e.client} invoke ${e.call} (${e.steps} steps)`;
    case 'ok':
      return `${t}  ${e.client} ok     ${e.call}`;
    case 'fail':
      return `${t}  ${e.client} fail   ${e.call}: ${e.code} ${e.message.slice(0, 100)}`;
    case 'note':
      return `${t}  ${e.client} note   ${e.call} #${e.seq}${e.filtered ? ' (should have been filtered)' : ''}`;
    case 'told':
      return `${t}  ${e.client} told   ${e.code}`;
    case 'probe':
      return `${t}  ${e.client} probe  ${e.what} ${e.ok ? 'ok' : 'SILENT'}`;
    case 'nemesis':
      return `${t}  nemesis ${e.phase.padEnd(5)} ${e.detail}${e.graceful ? ' (graceful)' : ''}${e.outcome ? `: ${e.outcome}` : ''}`;
    case 'gap':
      return `${t}  ${e.open ? 'no replica listening' : 'a replica listens again'}`;
    case 'runs':
      return `${t}  server ran ${e.call} ${e.count}×`;
  }
}
