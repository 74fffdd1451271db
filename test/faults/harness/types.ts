/** What a fault scenario is and what one run of it reports. */
import type { Counts } from './check.js';

export interface RunResult {
  counts: Counts;
  /** How the run ended: `delivered` (everything), or the typed code of an explicit refusal. */
  outcome: string;
  /** Did the fault actually land (a cut that fell past the end of the stream did not)? */
  landed: boolean;
  /** A failure that is not a count (an expectation the scenario states), with detail. */
  failure?: string | undefined;
}

/** One cell of the matrix: a name and a function of a seed. */
export interface Scenario {
  /** Row of the summary table, e.g. `cut/sqlite/rst/mid-utf8`. */
  readonly name: string;
  run(seed: number): Promise<RunResult>;
}

/** A family of scenarios sharing processes (a server, a proxy); set up once, torn down once. */
export interface Family {
  readonly name: string;
  setup(): Promise<Scenario[]>;
  teardown(): Promise<void>;
}

/** A store the servers can run on; `spec` is what the server process's `openStore` reads. */
export interface StoreFactory {
  readonly name: string;
  /** Whether sessions survive kill -9 (the kill scenarios expect resumption, not re-initialization). */
  readonly durable: boolean;
  create(): Promise<{ spec: string; cleanup: () => Promise<void> }>;
}
