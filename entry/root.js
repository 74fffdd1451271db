// The package has no root entry point: every API lives under a subpath.
throw new Error(
  'mcp-continuity has no root export: import a subpath instead.\n' +
    'Subpaths: mcp-continuity/server, mcp-continuity/client, mcp-continuity/node, mcp-continuity/protocol, ' +
    'mcp-continuity/store, mcp-continuity/stores/memory, mcp-continuity/stores/sqlite, mcp-continuity/chaos.',
);
