/** The seeded PRNG the chaos proxy uses, so every failing run can be replayed from its seed. */
export { prng } from '../../src/chaos/prng.js';
