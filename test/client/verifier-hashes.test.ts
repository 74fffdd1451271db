/**
 * The verifier on every SHA-256 path the code can meet. A server chains an event one of
 * three ways by its size (the joined string below 512 UTF-16 units, the reused buffer up to
 * 256 KiB of UTF-8, in place past that), and a client verifies with one of two
 * implementations (node:crypto under the `node` condition; the pure-JS SHA-256 in browsers
 * and Workers, bundled here the way a browser build resolves `#crypto`). For each pair, a
 * history chained the server's way must verify as continuous, and seed 000's three failure
 * signatures (gap with continuous IDs, session resurrection, replay from zero) must each be
 * detected; the upgrade refusal (410 on the resume) is judged before any hash, on both.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import * as nodeBuild from './verifier-hashes-entry.js';

type Build = typeof nodeBuild;

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The verifier and chain code as a browser bundle resolves them: `#crypto` and `#turn` to their web modules. */
async function webBuild(dir: string): Promise<Build> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('verifier-hashes-entry.ts', import.meta.url))],
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    write: false,
    metafile: true,
    tsconfigRaw: '{}',
    logLevel: 'silent',
    plugins: [
      {
        name: 'web-platform',
        setup(b) {
          b.onResolve({ filter: /^#(crypto|turn)$/ }, (args) => ({ path: join(ROOT, 'src/platform', `${args.path.slice(1)}-web.ts`) }));
        },
      },
    ],
  });
  const inputs = Object.keys(result.metafile.inputs);
  assert.ok(inputs.some((i) => i.endsWith('platform/crypto-web.ts')) && !inputs.some((i) => i.includes('-node.ts')), inputs.join(', '));
  const file = join(dir, 'verifier-web.mjs');
  writeFileSync(file, result.outputFiles[0]?.text ?? '');
  return (await import(pathToFileURL(file).href)) as Build;
}

const EPOCH = 'q3Zt9xKc0bYw_1-A';
const OTHER_EPOCH = 'Zz9yXw8vUt7sRq6P';
const STREAM = '1';

/** A JSON-RPC notification whose text is about `units` UTF-16 units, with text past ASCII. */
function message(n: number, units: number): string {
  const pad = `é€中😀 ${'x'.repeat(Math.max(0, units - 80))}`;
  return JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { n, pad } } });
}

interface Ev {
  id: string;
  data: string;
  seq: number;
  chain: string;
}

/** A history numbered and chained the way the server does it (`hashNextChain`), from `first`. */
function chained(b: Build, payloads: readonly string[], epoch = EPOCH, first = 1, from = b.chainSeed(epoch, STREAM)): Ev[] {
  let chain = from;
  return payloads.map((data, i) => {
    const seq = first + i;
    chain = b.hashNextChain(chain, data);
    return { id: b.formatEventId({ epoch, stream: STREAM, seq, chain }), data, seq, chain };
  });
}

/** Sizes that take each of the server's three hash paths. */
const SIZES: Array<[string, number]> = [
  ['100 units (joined string)', 100],
  ['4 KiB (reused buffer)', 4096],
  ['64 KiB (reused buffer)', 65_536],
  ['300 K units, over 256 KiB of UTF-8 (in place)', 300_000],
];

describe('the verifier on every hash path (server chaining × client implementation)', () => {
  let dir: string;
  let web: Build;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mcp-verifier-hashes-'));
    web = await webBuild(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  for (const [label, units] of SIZES) {
    const payloads = Array.from({ length: 12 }, (_, i) => message(i + 1, units));

    it(`${label}: both implementations chain alike`, () => {
      assert.deepEqual(
        chained(web, payloads).map((e) => e.id),
        chained(nodeBuild, payloads).map((e) => e.id),
      );
    });

    for (const client of ['node:crypto', 'pure-JS (browsers, Workers)'] as const) {
      const b = (): Build => (client === 'node:crypto' ? nodeBuild : web);
      /** A verifier that fully processed events 1..5 of the true history. */
      const resumed = (h: readonly Ev[]): ReturnType<Build['createStreamVerifier']> => {
        const v = b().createStreamVerifier({ stream: STREAM, epoch: EPOCH });
        for (const e of h.slice(0, 5)) assert.equal(v.check(e.id, e.data).kind, 'continuous');
        const checkpoint = v.checkpoint();
        assert.ok(checkpoint);
        const again = b().createStreamVerifier({ stream: STREAM, epoch: EPOCH, checkpoint });
        again.reconnected();
        return again;
      };

      it(`${label}, verified with ${client}: a true resume is continuous; an altered event is a chain mismatch`, () => {
        const h = chained(nodeBuild, payloads);
        const v = resumed(h);
        for (const e of h.slice(5)) assert.equal(v.check(e.id, e.data).kind, 'continuous');
        const altered = resumed(h);
        const next = h[5] as Ev;
        assert.equal(altered.check(next.id, next.data.replace('"n":6', '"n":7')).kind, 'chain-mismatch');
      });

      it(`${label}, verified with ${client}: seed 000's three signatures are detected`, () => {
        const h = chained(nodeBuild, payloads);
        // Gap with continuous IDs: a new process numbers from the persisted counter (6, 7, …)
        // after events the client never got, with an empty log behind it.
        const restarted = chained(nodeBuild, payloads.slice(8), EPOCH, 6, (h[7] as Ev).chain);
        assert.equal(resumed(h).check((restarted[0] as Ev).id, (restarted[0] as Ev).data).kind, 'chain-mismatch');
        // Session resurrection: the same session ID and stream in a new session (its epoch).
        const resurrected = chained(nodeBuild, payloads, OTHER_EPOCH);
        const foreign = resumed(h).check((resurrected[5] as Ev).id, (resurrected[5] as Ev).data);
        assert.deepEqual([foreign.kind, 'part' in foreign ? foreign.part : undefined], ['foreign-stream', 'epoch']);
        // Replay from zero: a replica without the log starts the stream over.
        const fromZero = resumed(h).check((h[0] as Ev).id, (h[0] as Ev).data);
        assert.deepEqual([fromZero.kind, 'cause' in fromZero ? fromZero.cause : undefined], ['replay-reset', 'behind']);
      });

      it(`${label}, verified with ${client}: the upgrade refusal (410 session-superseded on the resume) ends the session`, () => {
        const verdict = b().verifyReconnect(
          { sessionId: 'sess-A', epoch: EPOCH },
          { status: 410, sessionId: 'sess-A', epoch: EPOCH, reason: 'session-superseded' },
        );
        assert.deepEqual(verdict, {
          kind: 'session-invalid',
          cause: 'status',
          status: 410,
          expected: 'sess-A',
          actual: 'sess-A',
          serverReason: 'session-superseded',
        });
      });
    }
  }
});
