/**
 * package.json `exports`, the CommonJS entry points and the README agree: every subpath has
 * types, an ES module and a `require` entry written by scripts/entry-points.ts, points at a
 * source file that exists, and is named in the README.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expected } from '../../scripts/entry-points.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { exports: Record<string, string | Record<string, string>> };
const subpaths = Object.entries(pkg.exports).filter(([key]) => key !== '.' && key !== './package.json') as Array<[string, Record<string, string>]>;

test('every subpath has types, import and require conditions; the entry files are current', () => {
  const want = expected(pkg.exports);
  assert.deepEqual(pkg.exports, want.exports, 'run node --import tsx scripts/entry-points.ts');
  for (const [file, source] of want.files) {
    assert.equal(
      existsSync(join(root, file)) ? readFileSync(join(root, file), 'utf8') : undefined,
      source,
      `${file}: run node --import tsx scripts/entry-points.ts`,
    );
  }
  for (const [subpath, conditions] of subpaths) {
    // `./client` also has `browser` (without fileCheckpoint), before `import` so bundlers for browsers take it.
    const extra = subpath === './client' ? ['browser'] : [];
    assert.deepEqual(
      Object.keys(conditions)
        .filter((c) => !extra.includes(c))
        .sort(),
      ['import', 'require', 'types'],
      subpath,
    );
    assert.deepEqual(Object.keys(conditions).slice(0, 1 + extra.length), ['types', ...extra], `${subpath}: the conditions in order`);
  }
  assert.equal(pkg.exports['./client']?.['browser' as never], './dist/client/web.js');
});

test('every subpath points at a source file that exists, with matching types', () => {
  for (const [subpath, conditions] of subpaths) {
    const js = conditions.import as string;
    assert.match(js, /^\.\/dist\/.+\.js$/, subpath);
    assert.equal(conditions.types, js.replace(/\.js$/, '.d.ts'), `${subpath}: types beside the code`);
    const source = join(root, js.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts'));
    assert.ok(existsSync(source), `${subpath}: ${source} exists`);
  }
});

test('the README names every subpath', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const [subpath] of subpaths) assert.ok(readme.includes(`mcp-continuity${subpath.slice(1)}`), `README.md names mcp-continuity${subpath.slice(1)}`);
});
