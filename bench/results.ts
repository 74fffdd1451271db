/** The results of one run: what every section of the benchmark adds, and the targets judged on them. */
import type { IdleResult } from './idle.js';
import type { ReplayResult } from './replay.js';
import type { Spread } from './stats.js';
import type { CellResult } from './throughput.js';
import type { VerifyResult } from './verify.js';

/** One target, judged. */
export interface TargetLine {
  status: 'PASS' | 'MISS' | 'SKIP';
  name: string;
  measured: string;
  bound: string;
}

export interface Profile {
  name: 'quick' | 'full';
  rounds: number;
  /** Per payload size: the burst the main grid (and the targets) use. */
  mainBurst: Record<number, number>;
}

export interface Results {
  profile: Profile;
  startedAt: string;
  durationS: number;
  machine: { node: string; cpus: number; cpu: string; loadavg: number[] };
  throughput: CellResult[];
  replay: ReplayResult[];
  refusal: { ms: Spread; refusedAs: string } | undefined;
  /** A request's floor on this machine: a GET for an unknown session on a fresh connection (404), ms. */
  requestFloorMs?: Spread | undefined;
  idle: IdleResult[];
  verify: VerifyResult[];
  targets: TargetLine[];
  /** Sections other harnesses add (e.g. a cluster run), rendered as given. */
  extra: Array<{ title: string; markdown: string }>;
  /** Measurements that failed (their cells are missing). */
  failures: string[];
}
