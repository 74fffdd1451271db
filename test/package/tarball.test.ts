/**
 * Acceptance of a user's first hour: from the packed tarball installed into an empty
 * project, `npx mcp-continuity --help` works, `serve` answers a real initialize, the
 * README's snippets compile strictly (no skipLibCheck) against the published types, and
 * `require()` loads a subpath where Node can, and otherwise fails naming the subpaths.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { shownExamples } from '../../scripts/readme-examples.js';
import { within } from '../helpers/wait.js';
import { cleanCopy, importedPackages, installInto, pack, run, tarballFiles } from './project.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const OWN_DEPENDENCIES = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies);
const examples = shownExamples(readFileSync(join(root, 'README.md'), 'utf8'));

let work: string;
let app: string;
let files: string[];

before(() => {
  work = mkdtempSync(join(tmpdir(), 'mcp-first-hour-'));
  cleanCopy(root, join(work, 'clone'));
  const tarball = pack(join(work, 'clone'), join(work, 'packed'));
  files = tarballFiles(tarball);
  // Packages the snippets import that a user installs themselves (a framework, say).
  const imports = examples.flatMap((file) => importedPackages(readFileSync(join(root, file), 'utf8')));
  const extra = [...new Set(imports)].filter((name) => name !== 'mcp-continuity' && !OWN_DEPENDENCIES.includes(name));
  app = join(work, 'app');
  installInto(app, root, tarball, extra);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('the tarball: built code, LICENSE and README; no source maps, no sources', { timeout: 10_000 }, () => {
  for (const file of [
    'LICENSE',
    'README.md',
    'package.json',
    'dist/cli/main.js',
    'dist/server/index.js',
    'dist/server/index.d.ts',
    'dist/store/index.d.ts',
    'entry/server.cjs',
    'entry/esm-only.cjs',
  ]) {
    assert.ok(files.includes(file), `${file} is in the tarball`);
  }
  assert.deepEqual(
    files.filter((f) => f.endsWith('.map')),
    [],
    'no source maps',
  );
  assert.deepEqual(
    files.filter((f) => f.startsWith('src/') || f.startsWith('test/')),
    [],
    'no sources or tests',
  );
  assert.match(readFileSync(join(app, 'node_modules/mcp-continuity/LICENSE'), 'utf8'), /^MIT License[\s\S]*mcp-continuity contributors/);
});

test('npx mcp-continuity --help works with nothing but the package installed', { timeout: 60_000 }, () => {
  const help = run('npx', ['--no-install', 'mcp-continuity', '--help'], app, 50_000);
  assert.equal(help.status, 0, `${help.stdout}\n${help.stderr}`);
  assert.match(help.stdout, /serve/, help.stdout);
});

test('serve prints its URL and answers a real initialize', { timeout: 60_000 }, async () => {
  // The installed bin, as npx runs it; started directly so that the test ends exactly this process.
  const child = spawn(join(app, 'node_modules/.bin/mcp-continuity'), ['serve', '--port', '0'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = await within(
      new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).on('line', (line) => {
          const found = /https?:\/\/\S+\/mcp\b/.exec(line);
          if (found) resolve(found[0]);
        });
        void exited.then((code) => reject(new Error(`serve exited with ${code} before printing its URL: ${stderr}`)));
      }),
      'serve to print its URL',
      30_000,
    );
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'first-hour', version: '0' } },
      }),
    });
    assert.equal(response.status, 200, `initialize: ${await response.clone().text()}`);
    assert.ok(response.headers.get('mcp-session-id'), 'a session ID');
    const body = await response.text();
    assert.match(body, /"serverInfo":\{"name":"mcp-continuity-example"/, body);
  } finally {
    child.kill('SIGTERM');
    await within(exited, 'serve to exit on SIGTERM', 10_000);
  }
});

test("the README's snippets compile strictly against the installed package, without skipLibCheck", { timeout: 120_000 }, () => {
  assert.ok(examples.length >= 2, `the README shows examples: ${examples.join(', ')}`);
  for (const file of examples) copyFileSync(join(root, file), join(app, file.replace(/^examples\//, '')));
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: false,
  };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['*.ts'] }, null, 2));
  const tsc = run(process.execPath, [join(app, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], app, 110_000);
  assert.equal(tsc.status, 0, `tsc:\n${tsc.stdout}\n${tsc.stderr}`);
});

test('require(): a subpath loads where Node can require ES modules, and fails with a message naming the subpaths where it cannot', { timeout: 30_000 }, () => {
  const loads = run(process.execPath, ['-e', "console.log(typeof require('mcp-continuity/server').createEndpoint)"], app);
  if (process.features.require_module === true) assert.equal(loads.stdout.trim(), 'function', `${loads.stdout}\n${loads.stderr}`);
  const old = run(process.execPath, ['--no-experimental-require-module', '-e', "require('mcp-continuity/server')"], app);
  assert.notEqual(old.status, 0);
  assert.match(old.stderr, /ESM-only/, old.stderr);
  assert.match(old.stderr, /mcp-continuity\/server, mcp-continuity\/client/, old.stderr);
  const rootRequire = run(process.execPath, ['-e', "require('mcp-continuity')"], app);
  assert.notEqual(rootRequire.status, 0);
  assert.match(rootRequire.stderr, /no root export[\s\S]*mcp-continuity\/store/, rootRequire.stderr);
  const rootImport = run(process.execPath, ['--input-type=module', '-e', "await import('mcp-continuity')"], app);
  assert.notEqual(rootImport.status, 0);
  assert.match(rootImport.stderr, /no root export: import a subpath/, rootImport.stderr);
});
