/**
 * The transport's browser bundle (esbuild, `browser` condition, minified): it builds with
 * no shims, takes the web platform modules, and stays within 10% of the 17 kB gzipped it
 * was before the browser work, plus what is allowed explicitly (scripts/bundle-size.ts
 * prints the numbers docs/frameworks.md quotes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TRANSPORT_ENTRY, bundleSize } from '../../scripts/bundle-size.js';

const BEFORE_GZIPPED = 17_000;
/**
 * What the checks of a restored checkpoint add, measured at +738 bytes gzipped:
 * the server and principal it is bound to, the ping that asks the server whether it knows
 * the session, the validation of what a custom store loads. They run in browsers too (a
 * browser app may keep its checkpoint in a store of its own), so they are not left out.
 */
const CHECKPOINT_CHECKS_GZIPPED = 800;
/**
 * Allowed beside the 10%, on purpose: the rules that keep a call the application gave up
 * from running later, and the total bound on an outage (give-up.ts, outage-budget.ts and
 * their use), measured at 875 bytes gzipped (18,506 to 19,381).
 */
const GIVE_UP_GZIPPED = 900;
/**
 * Allowed on purpose: every error the client throws is coded, and the one error table that
 * server, client and CLI share gained the codes for it (reinitialize-failed,
 * transport-started, inbound-message-invalid, the store and listen codes beside them). The
 * table ships whole so a client can name any code a server sends; measured at +452 bytes
 * gzipped (20,367 to 20,819).
 */
const CODED_ERRORS_GZIPPED = 500;

test('the transport bundles for the browser within 10% of its former gzipped size, plus what is allowed explicitly', async () => {
  const size = await bundleSize(TRANSPORT_ENTRY);
  assert.ok(
    size.inputs.some((i) => i.endsWith('dist/client/web.js')),
    'the browser entry of mcp-continuity/client',
  );
  assert.ok(
    size.inputs.some((i) => i.endsWith('dist/platform/crypto-web.js')),
    'the web #crypto',
  );
  assert.deepEqual(
    size.inputs.filter((i) => i.includes('-node.js') || i.includes('file-checkpoint')),
    [],
    'nothing for Node',
  );
  // OpenTelemetry stays out: the browser build of the client's observer calls the hook only.
  assert.ok(
    size.inputs.some((i) => i.endsWith('dist/telemetry/client-hooks.js')),
    'the hooks-only observer',
  );
  assert.deepEqual(
    size.inputs.filter((i) => i.includes('@opentelemetry')),
    [],
    'no OpenTelemetry API',
  );
  const bound = BEFORE_GZIPPED * 1.1 + CHECKPOINT_CHECKS_GZIPPED + GIVE_UP_GZIPPED + CODED_ERRORS_GZIPPED;
  assert.ok(size.gzipped <= bound, `${size.gzipped} bytes gzipped, over ${bound}`);
});
