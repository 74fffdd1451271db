/**
 * The two profiles of `npm run faults`. Short: inside `npm test`, about a thousand seeded
 * runs over every cell of the matrix. Long (`--long`): the same matrix about ten times
 * over. Both include malformed Hosts (the Node adapter answers them with 400).
 */
import { adversarialFamily } from './adversarial.js';
import { cutFamily } from './cuts.js';
import { hostileFamily } from './hostile.js';
import { killFamily, trimFamily } from './lifecycle.js';
import type { ProfileOptions } from './run.js';
import { STORES } from './stores.js';
import { upgradeFamily } from './upgrade.js';
import type { Family } from './types.js';

export interface Profile {
  families: Family[];
  runs: ProfileOptions['runs'];
  budgetMs: number;
}

function families(malformedHosts: boolean): Family[] {
  return [
    ...STORES.map((s) => cutFamily(s)),
    adversarialFamily({ malformedHosts }),
    ...STORES.map((s) => trimFamily(s)),
    ...STORES.map((s) => killFamily(s)),
    ...STORES.map((s) => upgradeFamily(s)),
    hostileFamily(),
  ];
}

/** Runs per scenario, by scenario name. */
function perScenario(table: Array<[RegExp, number]>): ProfileOptions['runs'] {
  return (_family, scenario) => table.find(([re]) => re.test(scenario))?.[1] ?? 1;
}

export function shortProfile(): Profile {
  return {
    families: families(true),
    runs: perScenario([
      [/^cut\/.*\/stall\//, 4],
      [/^cut\//, 22],
      [/^cursor\//, 50],
      [/^host-origin\//, 60],
      [/^trim\//, 10],
      [/^kill\//, 2],
      [/^upgrade\//, 3],
      [/^hostile\//, 2],
    ]),
    budgetMs: 5 * 60_000,
  };
}

export function longProfile(options: { malformedHosts: boolean }): Profile {
  return {
    families: families(options.malformedHosts),
    runs: perScenario([
      [/^cut\/.*\/stall\//, 30],
      [/^cut\//, 250],
      [/^cursor\//, 500],
      [/^host-origin\//, 1000],
      [/^trim\//, 100],
      [/^kill\//, 25],
      [/^upgrade\//, 30],
      [/^hostile\//, 20],
    ]),
    budgetMs: 60 * 60_000,
  };
}
