/** What `serve` prints on start: the version, and how to connect. */
import { version } from './usage.js';

/** The banner for a server listening at `url` on `store`, as replica `replicaId` (with its scrape URL under `--metrics`). */
export function banner(url: string, store: string, replicaId: string, metricsUrl?: string, tracesUrl?: string): string {
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'curl', version: '1.0.0' } },
  });
  return [
    `mcp-continuity ${version()} serving the example server at ${url} (store: ${store}; replica: ${replicaId})`,
    `  try it:   curl -sN ${url} -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' -d '${init}'`,
    `  inspect:  npx @modelcontextprotocol/inspector --cli ${url} --transport http --method tools/list`,
    `  audit:    npx mcp-continuity probe ${url}`,
    ...(metricsUrl === undefined ? [] : [`  metrics:  ${metricsUrl} (health: /healthz, readiness: /readyz)`]),
    ...(tracesUrl === undefined ? [] : [`  traces:   OTLP/HTTP to ${tracesUrl}`]),
  ].join('\n');
}
