'use strict';
throw require('./esm-only.cjs').esmOnly("require('mcp-continuity'): the package has no root export; require or import a subpath.");
