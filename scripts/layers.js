/**
 * Turns the layer table in eslint.config.js into `no-restricted-imports` settings, one block per
 * folder of src/. The rule compares import strings, not resolved paths, so each folder gets its
 * patterns spelled from where it stands: the config reads the tree at every run, and a new
 * subfolder is covered without anyone writing its depth down.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

const SEE = 'See docs/architecture.md.';

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every folder under src/, as a path relative to the repository root. */
function folders(root, dir = 'src') {
  const nested = readdirSync(join(root, dir), { withFileTypes: true }).filter((entry) => entry.isDirectory());
  return [dir, ...nested.flatMap((entry) => folders(root, `${dir}/${entry.name}`))];
}

/** The unit a folder belongs to: the deepest table entry containing it, else its top folder under src/. */
function unitOf(table, dir) {
  const inside = dir.slice('src/'.length);
  const named = Object.keys(table)
    .filter((unit) => inside === unit || inside.startsWith(`${unit}/`))
    .sort((a, b) => b.length - a.length)[0];
  return named ?? inside.split('/')[0];
}

/** The source file a published `types` path stands for: ./dist/x/y.d.ts is src/x/y.ts. */
const sourceOf = (types) => types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts');

/** The modules package.json "exports" publishes, and its "imports" aliases with the file each names. */
function published(root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const entries = Object.values(pkg.exports).flatMap((target) => (typeof target === 'object' && target.types ? [sourceOf(target.types)] : []));
  const aliases = Object.entries(pkg.imports).map(([alias, target]) => ({ alias, file: sourceOf(target.types) }));
  return { entries, aliases };
}

/** An import string from `dir` into `path`, as a regex prefix (a relative import always starts with a dot). */
function prefix(dir, path) {
  const rel = posix.relative(dir, path);
  return rel.startsWith('..') ? `${escape(rel)}/` : `\\./${escape(rel)}/`;
}

/**
 * One pattern per unit this folder may not reach, or may reach only through its entry points.
 * `allowed` lists exact import strings a known exception lets through.
 */
function patternsFor({ table, units, entries, aliases }, dir, allowed) {
  const self = unitOf(table, dir);
  // A folder the table does not name may import nothing outside itself, until someone says what it may.
  const rule = { may: [], entry: [], ...table[self] };
  const exempt = allowed.length > 0 ? `(?!(?:${allowed.map(escape).join('|')})$)` : '';
  const patterns = [];
  for (const unit of units) {
    if (unit === self || rule.may.includes(unit)) continue;
    const path = `src/${unit}`;
    const inner = units.filter((other) => other.startsWith(`${unit}/`)).map((other) => escape(other.slice(unit.length + 1)));
    const throughEntry = rule.entry.includes(unit);
    const open = throughEntry
      ? entries.filter((file) => file.startsWith(`${path}/`)).map((file) => escape(file.slice(path.length + 1).replace(/\.ts$/, '.js')))
      : [];
    const skip = [`(?:${['\\.\\.', ...inner].join('|')})/`, ...(open.length > 0 ? [`(?:${open.join('|')})$`] : [])].join('|');
    // The endpoint is the files of src/server itself, beside the layers in its subfolders.
    const label = inner.length > 0 ? `${path}/*.ts` : path;
    const message = throughEntry
      ? `Layering: ${dir} takes ${label} only through its public entry points (package.json "exports"). ${SEE}`
      : unit === 'platform'
        ? `Layering: ${dir} reaches src/platform only through the package.json "imports" aliases. ${SEE}`
        : `Layering: ${dir} may not import ${label}. ${SEE}`;
    patterns.push({ regex: `^${exempt}${prefix(dir, path)}(?!${skip})`, caseSensitive: true, message });
  }
  for (const { alias, file } of aliases) {
    const unit = unitOf(table, posix.dirname(file));
    // platform/ is reached only through its aliases, so the runtime condition can pick the file.
    if (unit === 'platform' || unit === self || rule.may.includes(unit)) continue;
    patterns.push({ regex: `^${escape(alias)}$`, caseSensitive: true, message: `Layering: ${dir} may not import ${alias} (${file}). ${SEE}` });
  }
  return patterns;
}

/**
 * The flat-config blocks for the layer table. `known` maps a file to the modules it still imports
 * against the table: each entry is let through for that file alone.
 */
export function layerRules(root, table, known = {}) {
  const dirs = folders(root);
  const top = dirs.filter((dir) => dir.split('/').length === 2).map((dir) => dir.slice('src/'.length));
  const context = { table, units: [...new Set([...Object.keys(table), ...top])], ...published(root) };
  const blocks = dirs.map((dir) => ({
    files: [`${dir}/*.ts`],
    rules: { 'no-restricted-imports': ['error', { patterns: patternsFor(context, dir, []) }] },
  }));
  for (const [file, targets] of Object.entries(known)) {
    const dir = posix.dirname(file);
    const allowed = targets.map((target) => {
      const rel = posix.relative(dir, target).replace(/\.ts$/, '.js');
      return rel.startsWith('..') ? rel : `./${rel}`;
    });
    blocks.push({ files: [file], rules: { 'no-restricted-imports': ['error', { patterns: patternsFor(context, dir, allowed) }] } });
  }
  return blocks;
}
