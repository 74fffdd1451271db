/**
 * The client's browser bundle size: `mcp-continuity/client` bundled by esbuild for the
 * browser (the `browser` export condition, from dist/: build first), minified, and its gzip
 * size (level 9), for the transport alone and with the SDK `Client`. docs/frameworks.md
 * quotes it; test/package/bundle-size.test.ts bounds it.
 * Usage: node --import tsx scripts/bundle-size.ts
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

export interface BundleSize {
  minified: number;
  gzipped: number;
  inputs: string[];
}

const ENTRIES = {
  transport: "export { ContinuityClientTransport } from 'mcp-continuity/client';",
  'transport + SDK Client':
    "export { ContinuityClientTransport } from 'mcp-continuity/client';\nexport { Client } from '@modelcontextprotocol/sdk/client/index.js';",
};

/** Bundles `source` (resolved from the repository root) for the browser. */
export async function bundleSize(source: string): Promise<BundleSize> {
  const result = await build({
    stdin: { contents: source, resolveDir: new URL('..', import.meta.url).pathname, loader: 'js' },
    bundle: true,
    platform: 'browser',
    format: 'esm',
    minify: true,
    write: false,
    metafile: true,
    // The repository's tsconfig `paths` point `#crypto` at the Node sources (for tsx): not for a bundle.
    tsconfigRaw: '{}',
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { minified: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength, inputs: Object.keys(result.metafile.inputs) };
}

export const TRANSPORT_ENTRY = ENTRIES.transport;

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const [name, source] of Object.entries(ENTRIES)) {
    const size = await bundleSize(source);
    console.log(
      `${name}: ${(size.minified / 1000).toFixed(1)} kB minified, ${(size.gzipped / 1000).toFixed(1)} kB gzipped (${size.minified} / ${size.gzipped} bytes)`,
    );
  }
}
