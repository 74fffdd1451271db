// The package has no root entry point: every API lives under a subpath.
import { createRequire } from 'node:module';

const { SUBPATHS } = createRequire(import.meta.url)('./esm-only.cjs');
throw new Error(`mcp-continuity has no root export: import a subpath instead.\nSubpaths: ${SUBPATHS.join(', ')}.`);
