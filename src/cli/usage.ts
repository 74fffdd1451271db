/**
 * The CLI's usage texts and its two kinds of failure. Kept apart from the commands so that
 * `--help` and `--version` load nothing else (the SDK and SQLite load only when needed).
 */
import { readFileSync } from 'node:fs';

/** A mistake in how the CLI was called: one line plus a usage hint, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
  /** The command whose usage to hint at. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.command = command;
  }
}

/** A command could not start (busy port, unusable store): one line naming the fix, exit code 1. */
export class StartupError extends Error {
  override name = 'StartupError';
}

/** The package version, read once from its `package.json`. */
export function version(): string {
  // dist/cli/usage.js and src/cli/usage.ts are both two levels below the package root.
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

export const MAIN_USAGE = `Usage: mcp-continuity <command> [options]

Commands:
  serve    run the example MCP server on a continuity-proving endpoint
  probe    audit any MCP server for silent loss, duplication or reordering on resume
  chaos    a seeded fault-injecting reverse proxy (HTTP, SSE, WebSocket)
  demo     our client and the official SDK client side by side through cuts and a kill -9

Options:
  --help, -h     show this help (or a command's: mcp-continuity <command> --help)
  --version, -v  print the version`;

export const SERVE_USAGE = `Usage: mcp-continuity serve [--port N] [--host H] [--path P] [--store S]
                            [--allowed-hosts LIST] [--drain-ms N] [--json] [--websocket] [--quiet]
                            [--metrics [HOST:]PORT] [--log-format text|json] [--unready-ms N]

Starts the example MCP server (tools, resources, prompts; the tool "emit" streams
notifications) on a continuity-proving Streamable HTTP endpoint.

  --port N              port to listen on (default 3000; 0 picks a free port)
  --host H              address to bind (default 127.0.0.1; loopback binds validate Host/Origin)
  --path P              endpoint path (default /mcp)
  --store S             sqlite:PATH (default sqlite:./mcp-continuity.db: sessions survive
                        restarts), memory (sessions die with the process), or a Redis
                        shared by replicas: redis://HOST:PORT[/DB], rediss://…,
                        redis-cluster://H1:P1,H2:P2 (options ?prefix=P&leaseMs=N;
                        see docs/clusters.md)
  --allowed-hosts LIST  more Host values to accept, comma-separated (name or name:port):
                        what a proxy or port-forward in front of a loopback server sends
  --drain-ms N          on SIGTERM, calls in flight get this long to finish while idle
                        sessions move to other replicas at once (default 20000, which fits
                        Kubernetes' 30 s grace period); SIGINT stops at once
  --json                answer POSTs with JSON instead of SSE
  --websocket           offer the SSE→WebSocket upgrade to clients that ask for it
  --quiet               print only the URL (and errors)
  --metrics [HOST:]PORT  serve /metrics (Prometheus), /healthz and /readyz on their own
                        port (HOST defaults to 127.0.0.1; see docs/operations.md)
  --log-format F        text (default) or json: one line per takeover, refusal,
                        divergence, drain, rebuild and store fault, naming the replica
  --unready-ms N        on SIGTERM, answer /readyz 503 for N ms before closing, so a
                        load balancer stops sending new requests first (default 0)

OpenTelemetry's own variables: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the
service in /metrics and on spans; OTEL_EXPORTER_OTLP_ENDPOINT (with the other
OTEL_EXPORTER_OTLP_* variables) exports spans over OTLP/HTTP (docs/operations.md).`;

export const PROBE_USAGE = `Usage: mcp-continuity probe <url> [options]

Audits an MCP Streamable HTTP server for silent divergence on resume: unknown sessions,
priming, exact resumption (GET and POST streams), same-millisecond bursts, forged and
foreign cursors, DELETE, replay epoch, Host/Origin validation, the upgrade boundary, and
with --restart-cmd/--replica: restarts, replicas, the session's log level and
subscriptions, and (with a countable --tool) at-most-once runs. Tells the era first:
legacy (2025, sessions), modern (2026-07-28, nothing to resume) or dual.

  --tool NAME         the tool to call to make the server stream (default: found by itself:
                      emit, trigger-long-running-operation, start-notification-stream)
  --args JSON         arguments for --tool
  --restart-cmd CMD   a shell command that restarts the server; checks resume across it
  --replica URL       another replica of the same server; resumes there (repeatable)
  --header 'N: V'     a header for every request, e.g. 'Authorization: Bearer …' (repeatable;
                      its value is redacted in every output, as are credentials in URLs)
  --timeout MS        per-request timeout (default 10000)
  --json              print the results as JSON
  --junit FILE        write a JUnit XML report to FILE
  --report FILE       write a self-contained HTML report (verdicts and timelines) to FILE
  --no-color          plain text even on a terminal

Exit status follows the overall verdict: 0 resumes safely (or resumption not applicable),
3 resumes with spec deviations, 4 resumes but loses events, 5 not resumable; 1 when the
probe could not run, 2 on a bad argument.`;

export const CHAOS_USAGE = `Usage: mcp-continuity chaos --target URL [--target URL …] [options]

A seeded fault-injecting reverse proxy for HTTP, SSE and WebSocket. Requests are spread
across the targets round robin; Host is rewritten to the target's, so a guarded loopback
server accepts proxied requests.

  --target URL        where to forward (repeatable; round robin per request)
  --port N            port to listen on (default 0: a free port, printed)
  --host H            address to bind (default 127.0.0.1)
  --seed N            seed for --cut-probability (default: random, printed)
  --cut-after-events N  cut each SSE response after N events
  --cut-after-bytes N   cut each response after N body bytes
  --cut-probability P   cut only this fraction of responses (default 1)
  --mode M            fin, rst or stall (default fin)
  --delay MS          delay every request by MS before forwarding

Prints the proxy's URL, then one line per fault injected.`;

export const DEMO_USAGE = `Usage: mcp-continuity demo [--events N] [--no-color]

Starts a server on the embedded store (SQLite in a temporary directory), the chaos
proxy and two clients (mcp-continuity/client and the official SDK client), streams a
long tool call through a cut and through a kill -9 with restart, and shows side by side
what each client saw. Nothing to set up; finishes in well under a minute.

  --events N    events per tool call (default 200)
  --no-color    plain text even on a terminal`;
