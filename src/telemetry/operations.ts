/**
 * MCP operations as the semantic conventions describe them: a span per request or
 * notification (`{mcp.method.name} {target}`, the client's span as remote parent from
 * `params._meta`), and its duration on `mcp.server.operation.duration` /
 * `mcp.client.operation.duration`. One tracker per session; it holds only the requests
 * still unanswered, so it is bounded by the session's in-flight limit.
 */
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { JsonRpcMessage } from '../protocol/jsonrpc.js';
import { extractFromMeta } from './trace-context.js';
import { SCOPE, instruments } from './meter.js';
import { KnownNames, OTHER, cut, knownMethod } from './names.js';

interface Open {
  readonly span: Span;
  readonly started: number;
  /** The request's method (its response may teach the server's tool and prompt names). */
  readonly method: string;
  /** The metric's attributes: the span's without the per-session and per-request ones. */
  readonly attributes: Attributes;
}

/** Which side of the operation this process is on. */
export type Side = 'server' | 'client';

/**
 * The span name and attributes of one request or notification. `attributes` are the
 * metric's (low cardinality); the span adds the session and request ids. With `names` (the
 * server's side) the metric's method, tool and prompt names are the server's own or
 * `_OTHER`: a client picks them, and must not pick the series. Every name is cut to a bound.
 */
export function describe(
  message: JsonRpcMessage & { method: string },
  sessionId: string | undefined,
  protocolVersion: string | undefined,
  names?: KnownNames,
): { name: string; attributes: Attributes; spanAttributes: Attributes } {
  const method = cut(message.method, 'mcp.method.name');
  const attributes: Attributes = { 'mcp.method.name': names ? knownMethod(message.method) : method, 'network.transport': 'tcp' };
  if (protocolVersion !== undefined) attributes['mcp.protocol.version'] = protocolVersion;
  const spanAttributes: Attributes = { ...attributes, 'mcp.method.name': method };
  if (sessionId !== undefined) spanAttributes['mcp.session.id'] = sessionId;
  if ('id' in message && message.id !== undefined && message.id !== null) spanAttributes['jsonrpc.request.id'] = cut(String(message.id), 'jsonrpc.request.id');
  const params = (message as { params?: Record<string, unknown> }).params;
  const full = typeof params?.['name'] === 'string' ? params['name'] : undefined;
  const kind = message.method === 'tools/call' ? 'tool' : message.method === 'prompts/get' ? 'prompt' : undefined;
  if (full === undefined || kind === undefined) return { name: method, attributes, spanAttributes };
  const key = kind === 'tool' ? 'gen_ai.tool.name' : 'gen_ai.prompt.name';
  const target = cut(full, key);
  attributes[key] = names && !names.has(kind, full) ? OTHER : target;
  spanAttributes[key] = target;
  if (kind === 'tool') attributes['gen_ai.operation.name'] = spanAttributes['gen_ai.operation.name'] = 'execute_tool';
  // Only a tool's or a prompt's name is a low-cardinality target (never a resource URI).
  return { name: `${message.method} ${target}`, attributes, spanAttributes };
}

/** The operations of one session on one side. */
export class Operations {
  readonly #side: Side;
  readonly #open = new Map<string, Open>();
  /** The server's tools and prompts (server side only; the client names its own). */
  readonly names: KnownNames | undefined;

  constructor(side: Side) {
    this.#side = side;
    this.names = side === 'server' ? new KnownNames() : undefined;
  }

  /**
   * A request or notification begins; returns the context its handling runs in (the span's).
   * `parent`: where the span hangs (the server extracts it from `params._meta`).
   */
  begin(message: JsonRpcMessage & { method: string }, sessionId: string | undefined, protocolVersion: string | undefined, parent?: Context): Context {
    const { name, attributes, spanAttributes } = describe(message, sessionId, protocolVersion, this.names);
    const from = parent ?? (this.#side === 'server' ? extractFromMeta((message as { params?: unknown }).params) : context.active());
    const span = trace
      .getTracer(SCOPE)
      .startSpan(name, { kind: this.#side === 'server' ? SpanKind.SERVER : SpanKind.CLIENT, attributes: spanAttributes }, from);
    const started = performance.now();
    if ('id' in message && message.id !== undefined && message.id !== null) {
      this.#open.set(JSON.stringify(message.id), { span, started, method: message.method, attributes });
    } else {
      // A notification is done once it is handed over.
      finish(this.#side, { span, started, method: message.method, attributes }, undefined);
    }
    return trace.setSpan(from, span);
  }

  /** Runs `handle` (the handing of `message` to its handler) inside the operation's span. */
  run(message: JsonRpcMessage & { method: string }, sessionId: string | undefined, protocolVersion: string | undefined, handle: () => void): void {
    context.with(this.begin(message, sessionId, protocolVersion), handle);
  }

  /** A response went out (server) or came in (client): its operation ends. */
  end(message: JsonRpcMessage): void {
    if (this.#open.size === 0 || !('id' in message) || 'method' in message) return;
    const key = JSON.stringify(message.id);
    const open = this.#open.get(key);
    if (!open) return;
    this.#open.delete(key);
    if (this.names && 'result' in message && (open.method === 'tools/list' || open.method === 'prompts/list'))
      this.names.learn(open.method === 'tools/list' ? 'tool' : 'prompt', message.result);
    const error = 'error' in message ? message.error : undefined;
    const toolError = 'result' in message && (message.result as { isError?: unknown }).isError === true;
    finish(
      this.#side,
      open,
      error ? { type: String(error.code), message: error.message } : toolError ? { type: 'tool_error', message: 'tool_error' } : undefined,
    );
  }

  /** An operation failed without a response (its request could not be sent): it ends with `type`. */
  fail(id: string | number, type: unknown): void {
    const key = JSON.stringify(id);
    const open = this.#open.get(key);
    if (!open) return;
    this.#open.delete(key);
    finish(this.#side, open, { type: String(type), message: String(type) });
  }

  /** The session ended with operations unanswered: they end with `type`. */
  abandon(type: string): void {
    for (const open of this.#open.values()) finish(this.#side, open, { type, message: type });
    this.#open.clear();
  }
}

function finish(side: Side, open: Open, error: { type: string; message: string } | undefined): void {
  // A JSON-RPC error's code is also the conventions' rpc.response.status_code, on the span and the metric.
  const status = error && /^-?\d{1,12}$/.test(error.type) ? error.type : undefined;
  const attributes: Attributes = error ? { ...open.attributes, 'error.type': cut(error.type, 'error.type') } : open.attributes;
  if (status !== undefined) attributes['rpc.response.status_code'] = status;
  if (error) {
    open.span.setAttribute('error.type', cut(error.type, 'error.type'));
    if (status !== undefined) open.span.setAttribute('rpc.response.status_code', status);
    open.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  }
  open.span.end();
  const seconds = (performance.now() - open.started) / 1000;
  const m = instruments();
  (side === 'server' ? m.serverOperationDuration : m.clientOperationDuration).record(seconds, attributes);
}
