/**
 * When the events of one streamed tool call reach a client: the measurement behind the
 * docs' table of what gzip on `text/event-stream` does. Uses fetch, which asks for and
 * decodes gzip, as a browser or the SDK client would.
 */
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'accept-encoding': 'gzip' };

export interface StreamTiming {
  /** The response's Content-Encoding, if any. */
  encoding: string | null;
  /** ms from sending the POST to each `notifications/message` event. */
  arrivals: number[];
  /** ms from sending the POST to the end of the response. */
  endedAt: number;
  /** How many events arrived in the same read as the last one. */
  inLastRead: number;
}

async function post(url: URL, body: unknown, session?: string): Promise<Response> {
  const headers: Record<string, string> = { ...HEADERS, 'mcp-protocol-version': '2025-11-25' };
  if (session !== undefined) headers['mcp-session-id'] = session;
  return fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Initializes a session at `url`, calls `emit` (`count` steps `intervalMs` apart) and times its events. */
export async function timeEmit(url: URL, count: number, intervalMs: number): Promise<StreamTiming> {
  const init = await post(url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'sse-timing', version: '1.0.0' } },
  });
  const session = init.headers.get('mcp-session-id');
  if (init.status !== 200 || session === null) throw new Error(`initialize through ${url.href}: HTTP ${init.status} ${await init.text()}`);
  await init.text();
  await (await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).text();
  const started = performance.now();
  const call = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'emit', arguments: { count, intervalMs } } }, session);
  if (call.status !== 200 || call.body === null) throw new Error(`tools/call emit: HTTP ${call.status}`);
  const arrivals: number[] = [];
  let inLastRead = 0;
  let text = '';
  const decoder = new TextDecoder();
  const reader = call.body.getReader();
  for (;;) {
    const { value: chunk, done } = await reader.read();
    if (done) break;
    const at = performance.now() - started;
    text += decoder.decode(chunk, { stream: true });
    const found = text.split('notifications/message').length - 1;
    const fresh = found - arrivals.length;
    for (let i = 0; i < fresh; i++) arrivals.push(at);
    if (fresh > 0) inLastRead = fresh;
  }
  return { encoding: call.headers.get('content-encoding'), arrivals, endedAt: performance.now() - started, inLastRead };
}

/** The largest gap between two consecutive arrivals, ms. */
export function largestGap(t: StreamTiming): number {
  let gap = t.arrivals[0] ?? 0;
  for (let i = 1; i < t.arrivals.length; i++) gap = Math.max(gap, (t.arrivals[i] ?? 0) - (t.arrivals[i - 1] ?? 0));
  return gap;
}
