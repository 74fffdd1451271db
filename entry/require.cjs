'use strict';
// mcp-continuity is an ES module package: `require()` cannot load it. This file is what
// the `require` export condition resolves to, so the failure names the way out.
const error = new Error(
  'mcp-continuity is ESM-only: load it with `import` (or `await import()` from CommonJS), not `require()`.\n' +
    'Subpaths: mcp-continuity/server, mcp-continuity/client, mcp-continuity/node, mcp-continuity/protocol,\n' +
    'mcp-continuity/store, mcp-continuity/stores/memory, mcp-continuity/stores/sqlite, mcp-continuity/chaos.\n' +
    'In a CommonJS project, name your file *.mjs or set "type": "module" in package.json.',
);
error.code = 'ERR_REQUIRE_ESM';
throw error;
