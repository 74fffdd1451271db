/** What `verifier-hashes.test.ts` runs of the client and the chain, once as Node runs it and once bundled for the web. */
export { createStreamVerifier, verifyReconnect } from '../../src/client/verifier.js';
export { hashNextChain } from '../../src/protocol/chain-hash.js';
export { chainSeed, formatEventId } from '../../src/protocol/event-id.js';
