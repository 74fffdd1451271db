/**
 * A raw Streamable HTTP client for tests: real sockets (node:http), SSE parsed with
 * eventsource-parser, and the ability to cut a response after any number of events.
 */
import { request as httpRequest, type IncomingMessage, type ClientRequest } from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface RawResponse {
  status: number;
  headers: IncomingMessage['headers'];
  /** Parsed SSE events (for text/event-stream) */
  events: EventSourceMessage[];
  /** Raw body text (for JSON answers) */
  text: string;
  json(): unknown;
  retry: number | undefined;
  /** The response was cut at `timeoutMs` instead of ending by itself. */
  timedOut: boolean;
}

export interface SendOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** Stop reading (destroy the socket) once this returns true for an event. */
  cutWhen?: ((event: EventSourceMessage, all: EventSourceMessage[]) => boolean) | undefined;
  /** How to cut: 'fin' ends the socket, 'rst' resets it. */
  cut?: 'fin' | 'rst';
  /** Give up (and cut) after this many ms without the response ending. */
  timeoutMs?: number;
  /** Called when the response's headers are in. */
  onResponse?: (() => void) | undefined;
}

export const ACCEPT_BOTH = 'application/json, text/event-stream';

/** Sends one request and reads its whole response (or until cut). */
export function send(url: URL | string, options: SendOptions = {}): Promise<RawResponse> {
  const method = options.method ?? (options.body === undefined ? 'GET' : 'POST');
  const headers: Record<string, string> = { ...options.headers };
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
    headers.accept ??= ACCEPT_BOTH;
  } else if (method === 'GET') {
    headers.accept ??= 'text/event-stream';
  }
  return new Promise((resolve, reject) => {
    const req: ClientRequest = httpRequest(url, { method, headers }, (res) => {
      options.onResponse?.();
      const events: EventSourceMessage[] = [];
      let text = '';
      let retry: number | undefined;
      let settled = false;
      const finish = (timedOut = false): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, events, text, retry, timedOut, json: () => JSON.parse(text) });
      };
      const cut = (timedOut = false): void => {
        if (options.cut === 'rst') req.socket?.resetAndDestroy();
        else req.destroy();
        finish(timedOut);
      };
      const parser = createParser({
        onEvent: (event) => {
          if (settled) return;
          events.push(event);
          if (options.cutWhen?.(event, events)) cut();
        },
        onRetry: (ms) => {
          retry = ms;
        },
      });
      const timer = setTimeout(() => cut(true), options.timeoutMs ?? 10_000);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (settled) return;
        text += chunk;
        parser.feed(chunk);
      });
      res.on('end', () => finish());
      res.on('close', () => finish());
      res.on('error', () => finish());
    });
    req.on('error', (error) => {
      // A socket we cut ourselves may report an error after we resolved; ignore that.
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error);
    });
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export interface Handshake {
  sessionId: string;
  epoch: string;
  protocolVersion: string;
  response: RawResponse;
}

let nextId = 1;
export function rpc(method: string, params: Record<string, unknown> = {}, id: number = nextId++): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method, params };
}

/** Initializes a session at `protocolVersion` and sends `notifications/initialized`. */
export async function initialize(url: URL | string, protocolVersion = '2025-11-25'): Promise<Handshake> {
  const response = await send(url, {
    body: rpc('initialize', { protocolVersion, capabilities: { sampling: {}, elicitation: {} }, clientInfo: { name: 'raw-test', version: '0' } }),
  });
  const sessionId = String(response.headers['mcp-session-id']);
  const epoch = String(response.headers['x-mcp-replay-epoch']);
  const result = JSON.parse(response.events.at(-1)?.data ?? response.text) as { result?: { protocolVersion?: string } };
  await send(url, { body: { jsonrpc: '2.0', method: 'notifications/initialized' }, headers: { 'mcp-session-id': sessionId } });
  return { sessionId, epoch, protocolVersion: result.result?.protocolVersion ?? '', response };
}

/** Session headers for follow-up requests. */
export function sessionHeaders(h: Handshake, extra: Record<string, string> = {}): Record<string, string> {
  return { 'mcp-session-id': h.sessionId, 'mcp-protocol-version': h.protocolVersion, ...extra };
}

/** Events that carry a JSON-RPC message (priming events have empty data). */
export function messages(events: EventSourceMessage[]): Array<Record<string, unknown>> {
  return events.filter((e) => e.data !== '').map((e) => JSON.parse(e.data) as Record<string, unknown>);
}

/**
 * Reads the standalone GET stream (`headers` may ask for more, an upgrade say) up to a
 * sentinel, instead of for a while: once the response's headers are in, the example
 * server's watched resource is updated, and its `notifications/resources/updated` comes
 * after everything the stream had to say. `sentinel` is what was read before it.
 */
export async function readUntilSentinel(
  url: URL,
  postHeaders: Record<string, string>,
  headers: Record<string, string>,
): Promise<{ response: RawResponse; before: EventSourceMessage[] }> {
  const isSentinel = (e: EventSourceMessage): boolean => e.data.includes('notifications/resources/updated');
  const subscribed = await send(url, { body: rpc('resources/subscribe', { uri: 'test://watched-resource' }), headers: postHeaders });
  if (subscribed.status !== 200) throw new Error(`resources/subscribe answered ${subscribed.status}: ${subscribed.text}`);
  let opened!: () => void;
  const open = new Promise<void>((resolve) => (opened = resolve));
  const reading = send(url, { headers, onResponse: opened, cutWhen: isSentinel });
  await open;
  const updated = await send(url, { body: rpc('tools/call', { name: 'update_watched_resource', arguments: {} }), headers: postHeaders });
  if (updated.status !== 200) throw new Error(`update_watched_resource answered ${updated.status}: ${updated.text}`);
  const response = await reading;
  const at = response.events.findIndex(isSentinel);
  if (at < 0) throw new Error(`no sentinel on the stream (status ${response.status}, timed out: ${String(response.timedOut)}): ${response.text.slice(0, 300)}`);
  return { response, before: response.events.slice(0, at) };
}
