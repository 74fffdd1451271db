'use strict';
// mcp-continuity is an ES module package. Node >= 20.19 can require() ES modules, and the
// `require` export condition lets it; on an older Node, or for the root (which exports
// nothing), require() fails with this message instead of Node's bare one.
// The entry/*.cjs files and the `require` conditions are written by scripts/entry-points.ts.
const { exports: map } = require('../package.json');

const SUBPATHS = Object.keys(map)
  .filter((key) => key !== '.' && key !== './package.json')
  .map((key) => `mcp-continuity${key.slice(1)}`);

function esmOnly(what, cause) {
  const error = new Error(
    `${what}\nmcp-continuity is ESM-only: load it with \`import\` (or \`await import()\` from CommonJS); ` +
      'require() works only on a Node that can require ES modules (>= 20.19).\n' +
      `Subpaths: ${SUBPATHS.join(', ')}.\n` +
      'In a CommonJS project, name your file *.mjs or set "type": "module" in package.json.',
    cause === undefined ? undefined : { cause },
  );
  error.code = 'ERR_REQUIRE_ESM';
  return error;
}

/** Loads a subpath's ES module through require(esm), or explains why it cannot. */
function load(subpath, requireEsm) {
  try {
    return requireEsm();
  } catch (error) {
    const code = error && error.code;
    if (code === 'ERR_REQUIRE_ESM' || code === 'ERR_REQUIRE_ASYNC_MODULE') {
      throw esmOnly(`require('mcp-continuity/${subpath}') failed: this Node cannot require() ES modules.`, error);
    }
    throw error;
  }
}

module.exports = { SUBPATHS, esmOnly, load };
