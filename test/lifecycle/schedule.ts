/**
 * Schedules from seeds (pure): which cluster, which clients, and which nemesis operations
 * at which moments. The same seed gives the same schedule everywhere, so a failing seed
 * replays with `npm run lifecycle -- --seed S`.
 */
import { prng } from '../helpers/prng.js';
import type { ClientKind } from './history.js';

export type Front = 'round-robin' | 'nginx-docs' | 'nginx-keepalive';

export interface Topology {
  readonly store: 'redis' | 'sqlite';
  readonly replicas: number;
  readonly front: Front;
}

/** Small clusters: the machine is shared. Redis: 2–3 replicas; SQLite: one process. */
export const TOPOLOGIES: readonly Topology[] = [
  { store: 'redis', replicas: 2, front: 'round-robin' },
  { store: 'redis', replicas: 3, front: 'nginx-docs' },
  { store: 'redis', replicas: 2, front: 'nginx-keepalive' },
  { store: 'sqlite', replicas: 1, front: 'round-robin' },
  { store: 'sqlite', replicas: 1, front: 'nginx-docs' },
];

export const topologyName = (t: Topology): string => `${t.store}×${t.replicas}/${t.front}`;

export type NemesisOp =
  /** SIGTERM (the replica drains), then a replacement on the same port once it exited. */
  | { kind: 'sigterm'; replica: number }
  /** A new replica on a new port joins the front, then an old one gets SIGTERM and leaves it. */
  | { kind: 'new-replica'; replica: number }
  /** kill -9, then a replacement on the same port or a new one. */
  | { kind: 'kill9'; replica: number; newPort: boolean }
  /** SIGSTOP for `ms` (past the lease on Redis), then SIGCONT. */
  | { kind: 'pause'; replica: number; ms: number }
  /** Reset every client connection to the front (`all`) or one of them. */
  | { kind: 'cut'; all: boolean }
  /** CLIENT KILL TYPE pubsub on the Redis: every replica's subscriber connection drops. */
  | { kind: 'pubsub-kill' };

export const GRACEFUL_OPS: ReadonlySet<NemesisOp['kind']> = new Set(['sigterm', 'new-replica']);

export interface Step {
  /** Schedule: how long after the previous operation ended this one starts, ms. */
  readonly delayMs: number;
  readonly op: NemesisOp;
}

export interface Schedule {
  readonly seed: number;
  readonly topology: Topology;
  readonly clients: readonly ClientKind[];
  readonly steps: readonly Step[];
  /** Each call logs 1…maxSteps times, intervalMs apart (0…maxIntervalMs). */
  readonly maxSteps: number;
  readonly maxIntervalMs: number;
}

export interface GenerateOptions {
  topologies?: readonly Topology[] | undefined;
  clientKinds?: readonly ClientKind[] | undefined;
  /** The lease of the Redis replicas, ms: pauses last past it. */
  leaseMs: number;
  /** Nemesis operations per schedule: 1 … maxOps. */
  maxOps: number;
}

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)] as T;

/** The schedule of `seed`. */
export function generate(seed: number, options: GenerateOptions): Schedule {
  const rand = prng(seed);
  const topology = pick(rand, options.topologies ?? TOPOLOGIES);
  const kinds = options.clientKinds ?? ['ours', 'ours', 'sdk1', 'sdk2'];
  const clients = [pick(rand, kinds), pick(rand, kinds)];
  // A third of the schedules are graceful only: checker 3 then covers the whole history.
  const gracefulOnly = rand() < 1 / 3;
  const ops: Array<NemesisOp['kind']> =
    topology.store === 'redis'
      ? gracefulOnly
        ? ['sigterm', 'new-replica']
        : ['sigterm', 'new-replica', 'kill9', 'kill9', 'pause', 'cut', 'pubsub-kill']
      : gracefulOnly
        ? ['sigterm']
        : ['sigterm', 'kill9', 'pause', 'cut'];
  const count = 1 + Math.floor(rand() * options.maxOps);
  const steps: Step[] = [];
  for (let i = 0; i < count; i++) {
    const kind = pick(rand, ops);
    const replica = Math.floor(rand() * topology.replicas);
    const delayMs = 50 + Math.floor(rand() * 650);
    const op: NemesisOp =
      kind === 'kill9'
        ? { kind, replica, newPort: topology.store === 'redis' && rand() < 0.5 }
        : kind === 'pause'
          ? { kind, replica, ms: topology.store === 'redis' ? Math.round(options.leaseMs * 1.5 + rand() * 500) : 200 + Math.floor(rand() * 800) }
          : kind === 'cut'
            ? { kind, all: rand() < 0.5 }
            : kind === 'pubsub-kill'
              ? { kind }
              : { kind, replica };
    steps.push({ delayMs, op });
  }
  return { seed, topology, clients, steps, maxSteps: 4, maxIntervalMs: 120 };
}

export function describeOp(op: NemesisOp): string {
  switch (op.kind) {
    case 'sigterm':
    case 'new-replica':
      return `${op.kind} r${op.replica}`;
    case 'kill9':
      return `kill9 r${op.replica} → ${op.newPort ? 'new' : 'same'} port`;
    case 'pause':
      return `pause r${op.replica} ${op.ms} ms`;
    case 'cut':
      return `cut ${op.all ? 'all' : 'one'}`;
    case 'pubsub-kill':
      return 'pubsub-kill';
  }
}
