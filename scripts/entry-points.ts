/**
 * Writes the CommonJS entry points: for every subpath in package.json `exports` with an
 * `import` (or `default`) target, an `entry/<name>.cjs` that loads that target through Node's
 * require(esm) (or explains why it cannot), and the subpath's `require` condition.
 * Run it after adding a subpath; test/package/exports.test.ts fails until then.
 * Usage: node --import tsx scripts/entry-points.ts [--check]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

type Conditions = { types?: string; import?: string; require?: string; default?: string };
const root = new URL('..', import.meta.url);

/** `./stores/memory` → `entry/stores-memory.cjs`. */
export function entryFile(subpath: string): string {
  return `entry/${subpath.slice(2).replaceAll('/', '-')}.cjs`;
}

export function entrySource(subpath: string, target: string): string {
  return `'use strict';\nmodule.exports = require('./esm-only.cjs').load('${subpath.slice(2)}', () => require('.${target}'));\n`;
}

/** What package.json's exports and the entry files should be. */
export function expected(exportsMap: Record<string, string | Conditions>): { exports: Record<string, string | Conditions>; files: Map<string, string> } {
  const files = new Map<string, string>();
  const out: Record<string, string | Conditions> = {};
  for (const [subpath, value] of Object.entries(exportsMap)) {
    // A subpath added as `{ types, default }` (the usual form) becomes `{ types, import, require }`.
    const esm = typeof value === 'string' ? undefined : (value.import ?? value.default);
    if (typeof value === 'string' || subpath === '.' || esm === undefined) {
      out[subpath] = value;
      continue;
    }
    const file = entryFile(subpath);
    files.set(file, entrySource(subpath, esm));
    const { types, import: _import, default: _default, require: _require, ...rest } = value;
    // Other conditions (`browser`) go before `import`: the first that holds wins.
    out[subpath] = { ...(types === undefined ? {} : { types }), ...rest, import: esm, require: `./${file}` };
  }
  return { exports: out, files };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const pkgPath = new URL('package.json', root);
  const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { exports: Record<string, string | Conditions> };
  const want = expected(pkg.exports);
  const stale: string[] = [];
  if (JSON.stringify(want.exports) !== JSON.stringify(pkg.exports)) stale.push('package.json exports');
  for (const [file, source] of want.files) {
    const path = new URL(file, root);
    if (!existsSync(path) || readFileSync(path, 'utf8') !== source) stale.push(file);
  }
  if (process.argv.includes('--check')) {
    if (stale.length > 0) {
      console.error(`stale: ${stale.join(', ')}; run node --import tsx scripts/entry-points.ts`);
      process.exitCode = 1;
    }
  } else {
    writeFileSync(pkgPath, `${JSON.stringify({ ...pkg, exports: want.exports }, null, 2)}\n`);
    for (const [file, source] of want.files) writeFileSync(new URL(file, root), source);
  }
}
