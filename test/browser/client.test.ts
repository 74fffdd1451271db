/**
 * The client in a real headless Chromium (Debian's `chromium`), bundled from
 * `mcp-continuity/client` by esbuild for the browser with no shims or polyfills. Same-origin
 * and cross-origin (the documented CORS settings), the SDK `Client` on our transport lists
 * tools, calls `emit` with progress, is cut after progress 5 and resumes with every
 * notification exactly once; a resume whose replay was altered is refused (`chain-mismatch`);
 * a server without CORS settings gets `cors-refused`, not `stream-lost`.
 * Under CI=true a missing Chromium fails; elsewhere the test is skipped loudly.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';
import type { ScenarioResult } from './page.js';
import { startFront, type Front } from './front.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const STEPS = 20;
const CUT_AFTER = 5;

const missing = !existsSync(CHROMIUM);
if (missing && process.env['CI'] === 'true') {
  it('Chromium is installed (CI)', () => assert.fail(`${CHROMIUM} is missing: .ci/run installs it (apt-get install -y chromium)`));
} else if (missing) {
  console.warn(`\n*** SKIPPING the browser client test: ${CHROMIUM} is not installed (apt-get install -y chromium) ***\n`);
}

/**
 * The page's bundle, as a browser application would build it: `mcp-continuity/client` is
 * resolved through package.json (the `browser` condition; dist/, so build first). The
 * repository's tsconfig is not applied: its `paths` point `#crypto` at the Node sources for tsx.
 */
async function bundle(): Promise<{ code: string; inputs: string[] }> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('page.ts', import.meta.url))],
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    tsconfigRaw: '{}',
    logLevel: 'silent',
  });
  return { code: result.outputFiles[0]?.text ?? '', inputs: Object.keys(result.metafile.inputs) };
}

const PAGE = '<!doctype html><meta charset="utf-8"><title>mcp-continuity</title><script type="module" src="/bundle.js"></script>';
const EVERY_STEP = Array.from({ length: STEPS }, (_, i) => i + 1);

describe('the client in headless Chromium', { skip: missing ? `${CHROMIUM} not installed` : false, timeout: 120_000 }, () => {
  let browser: Browser;
  let front: Front;

  before(async () => {
    const { code, inputs } = await bundle();
    assert.ok(
      inputs.some((i) => i.endsWith('dist/client/web.js')),
      `the browser entry is bundled: ${inputs.filter((i) => i.includes('dist/')).join(', ')}`,
    );
    assert.ok(
      inputs.some((i) => i.endsWith('dist/platform/crypto-web.js')) && !inputs.some((i) => i.includes('-node.js')),
      'the web platform modules, not the Node ones',
    );
    front = await startFront(PAGE, code);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  });

  after(async () => {
    await browser?.close();
    await front?.close();
  });

  async function run(pageOrigin: string, path: string, options: { upgrade?: boolean } = {}): Promise<ScenarioResult> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    try {
      await page.goto(`${pageOrigin}/`);
      await page.waitForFunction(() => 'mcpScenario' in globalThis, undefined, { timeout: 30_000 });
      const result = await page.evaluate(
        ([url, steps, opts]) =>
          (globalThis as unknown as { mcpScenario(u: string, n: number, o: { upgrade?: boolean }): Promise<ScenarioResult> }).mcpScenario(url, steps, opts),
        [`${front.origin}${path}`, STEPS, options] as const,
      );
      assert.deepEqual(errors, [], 'no page errors');
      return result;
    } finally {
      await page.close();
    }
  }

  for (const cross of [false, true]) {
    const label = cross ? 'cross-origin' : 'same-origin';

    it(`${label}: lists tools, calls emit with progress, survives a cut with a verified resume`, async () => {
      front.faults = { cutAfterProgress: CUT_AFTER };
      const cuts = front.cuts;
      const resumes = front.resumes.length;
      const preflights = front.preflights;
      const r = await run(cross ? front.crossOrigin : front.origin, '/mcp');
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      assert.ok(r.tools.includes('emit'), `tools: ${r.tools.join(', ')}`);
      assert.equal(front.cuts, cuts + 1, 'the call was cut');
      assert.ok(front.resumes.length > resumes, 'the client resumed with Last-Event-ID');
      // Every progress exactly once, in order: the resume continued where the cut left off.
      assert.deepEqual(r.progress, EVERY_STEP);
      assert.deepEqual(r.result, { emitted: STEPS });
      assert.deepEqual(r.divergences, []);
      if (cross) assert.ok(front.preflights > preflights, 'the browser sent CORS preflights');
    });

    it(`${label}: refuses a resume whose replay breaks the hash chain`, async () => {
      front.faults = { cutAfterProgress: CUT_AFTER, tamperResume: true };
      const r = await run(cross ? front.crossOrigin : front.origin, '/mcp');
      assert.equal(r.error?.code, 'chain-mismatch', JSON.stringify(r.error));
      assert.equal(r.result, undefined, 'the call is not answered from a broken stream');
      assert.ok(r.progress.length < STEPS, `nothing after the altered event was delivered: ${r.progress.join(',')}`);
    });
  }

  it('the WebSocket upgrade asked for in a browser: reported once (upgrade-invalid), never asked of the server, the session stays on SSE', async () => {
    front.faults = {};
    const asks = front.upgradeAsks;
    const r = await run(front.origin, '/mcp', { upgrade: true });
    assert.equal(r.error, undefined, JSON.stringify(r.error));
    assert.deepEqual(r.result, { emitted: STEPS });
    assert.deepEqual(r.progress, EVERY_STEP);
    assert.deepEqual(r.reported, ['upgrade-invalid']);
    assert.equal(front.upgradeAsks, asks, 'no GET asked for an offer');
  });

  it('a server without CORS settings: the client names CORS, not a lost stream', async () => {
    const r = await run(front.crossOrigin, '/mcp-nocors');
    assert.equal(r.error?.code, 'cors-refused', JSON.stringify(r.error));
    assert.match(r.error?.message ?? '', /CORS/);
  });
});
