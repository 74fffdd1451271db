/**
 * The HTML report in a real headless Chromium (Debian's `chromium`): one file, no network
 * references, the verdict table and a timeline render. Under CI=true a missing Chromium
 * fails; elsewhere the test is skipped loudly.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { createExampleServer } from '../../src/example/index.js';
import { listen } from '../../src/node/index.js';
import { createEndpoint } from '../../src/server/index.js';
import { memoryStore } from '../../src/store/memory/index.js';
import { renderHtml } from '../../src/cli/probe/render-html.js';
import { CHECKS, runProbe } from '../../src/cli/probe/run.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const missing = !existsSync(CHROMIUM);
if (missing && process.env['CI'] === 'true') {
  test('Chromium is installed (CI)', () => assert.fail(`${CHROMIUM} is missing: .ci/run installs it (apt-get install -y chromium)`));
} else if (missing) {
  console.warn(`\n*** SKIPPING the HTML report browser test: ${CHROMIUM} is not installed (apt-get install -y chromium) ***\n`);
}

test(
  'the HTML report is one self-contained file whose verdict table and timelines render in Chromium',
  { skip: missing ? `${CHROMIUM} not installed` : false, timeout: 60_000 },
  async (t) => {
    const store = memoryStore();
    const endpoint = createEndpoint({ server: () => createExampleServer(), store });
    const listener = await listen(endpoint, { port: 0 });
    t.after(() => listener.close());
    const report = await runProbe({ url: listener.url });
    const html = renderHtml(report);
    // No network references: nothing to load, link to or import outside the file.
    assert.doesNotMatch(html, /\ssrc=|<link|<script|@import|url\(|href="(?!#)/i);
    const dir = mkdtempSync(join(tmpdir(), 'mcpc-html-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'report.html');
    writeFileSync(file, html);

    const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    t.after(() => browser.close());
    const page = await browser.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(pathToFileURL(file).href);
    assert.deepEqual(requests, [pathToFileURL(file).href], 'the page loads nothing but itself');
    const rows = await page.locator('#verdicts tbody tr').count();
    assert.equal(rows, CHECKS.length, 'one row per check');
    const firstVerdict = await page.locator('#verdicts tbody tr td.v').first().innerText();
    assert.match(firstVerdict, /^(pass|FAIL|n\/a)$/);
    const timeline = page.locator('#timeline-resume-post');
    const box = await timeline.boundingBox();
    assert.ok(box && box.width > 100 && box.height > 5, `the resume-post timeline renders (${JSON.stringify(box)})`);
    const marks = await page.locator('#timeline-resume-post rect.mark').count();
    assert.ok(marks > 10, `timeline has its event marks (${marks})`);
    assert.ok((await page.locator('#timeline-resume-post rect.cut').count()) === 1, 'the cut is drawn');
  },
);
