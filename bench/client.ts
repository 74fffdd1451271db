/**
 * The benchmark's client: raw `node:http` and a minimal SSE reader, so the client costs
 * little and the same for every contender. It reads each burst to its final response,
 * records each notification's latency (sender's clock to the moment it is parsed here),
 * and resumes with `Last-Event-ID` when a server cuts a lagging reader (our default
 * reader buffer is bounded; a cut is counted and reported, never hidden).
 */
import { Agent, request, type IncomingMessage } from 'node:http';
import { clock } from './workload.js';

// No keep-alive for streams: a server closing an idle socket as the client reuses it would
// fail a request at random. Session setup (many short requests in a row) reuses sockets and
// retries that one failure.
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
const setupAgent = new Agent({ keepAlive: true, maxSockets: Infinity });
const PROTOCOL = '2025-11-25';

export interface Session {
  id: string;
  protocolVersion: string;
}

/** Latencies of one round, ms. */
export class Latencies {
  values: Float64Array;
  count = 0;
  constructor(capacity: number) {
    this.values = new Float64Array(capacity);
  }
  add(ms: number): void {
    if (this.count < this.values.length) this.values[this.count++] = ms;
  }
  /** The `p`th percentile (0–100). */
  percentile(p: number): number {
    if (this.count === 0) return Number.NaN;
    const sorted = this.values.subarray(0, this.count).sort();
    return sorted[Math.min(this.count - 1, Math.floor((p / 100) * this.count))] as number;
  }
}

function send(url: URL, method: string, headers: Record<string, string>, body?: unknown, via: Agent = agent): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: via }, resolve);
    req.on('error', reject);
    if (body !== undefined) {
      req.setHeader('content-type', 'application/json');
      req.end(JSON.stringify(body));
    } else req.end();
  });
}

async function text(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let out = '';
  for await (const c of res) out += c as string;
  return out;
}

const ACCEPT = 'application/json, text/event-stream';
let nextId = 1;

/** `send` on a reused socket, once more on a fresh one if the reused socket was closed under it. */
async function setupSend(url: URL, method: string, headers: Record<string, string>, body?: unknown): Promise<IncomingMessage> {
  try {
    return await send(url, method, headers, body, setupAgent);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') throw error;
    return send(url, method, headers, body, agent);
  }
}

/** Initializes a session (initialize, then notifications/initialized). */
export async function openSession(url: URL): Promise<Session> {
  const res = await setupSend(
    url,
    'POST',
    { accept: ACCEPT },
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    },
  );
  const id = res.headers['mcp-session-id'];
  const body = await text(res);
  if (res.statusCode !== 200 || typeof id !== 'string') throw new Error(`initialize: ${res.statusCode} ${body.slice(0, 200)}`);
  const json = body.startsWith('{')
    ? body
    : (
        body
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .at(-1) ?? 'data: {}'
      ).slice(6);
  const protocolVersion = (JSON.parse(json) as { result?: { protocolVersion?: string } }).result?.protocolVersion ?? PROTOCOL;
  const session = { id, protocolVersion };
  const ack = await setupSend(url, 'POST', { accept: ACCEPT, ...headers(session) }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  await text(ack);
  return session;
}

export function headers(s: Session, extra: Record<string, string> = {}): Record<string, string> {
  return { 'mcp-session-id': s.id, 'mcp-protocol-version': s.protocolVersion, ...extra };
}

export async function closeSession(url: URL, s: Session): Promise<void> {
  await text(await setupSend(url, 'DELETE', headers(s)));
}

export interface StreamRead {
  /** Notifications read. */
  notifications: number;
  /** Times the server ended the response before the final one and the client resumed. */
  resumes: number;
  /** ID of the first event with data, and of the last `keepIds` (for replay cursors). */
  firstId: string;
  lastIds: string[];
}

/**
 * Reads SSE from `res` until the final response (an event that is not a notification) or
 * the end. `onEvent` sees each event; returns whether the final response was seen.
 */
export function readEvents(res: IncomingMessage, onEvent: (id: string, data: string) => boolean): Promise<boolean> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let finished = false;
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      buffer += chunk;
      let start = 0;
      for (;;) {
        const end = buffer.indexOf('\n\n', start);
        if (end === -1) break;
        let id = '';
        let data = '';
        let i = start;
        while (i < end) {
          let nl = buffer.indexOf('\n', i);
          if (nl === -1 || nl > end) nl = end;
          if (buffer.startsWith('data: ', i)) data = data === '' ? buffer.slice(i + 6, nl) : `${data}\n${buffer.slice(i + 6, nl)}`;
          else if (buffer.startsWith('id: ', i)) id = buffer.slice(i + 4, nl);
          i = nl + 1;
        }
        start = end + 2;
        if (data !== '' && onEvent(id, data)) finished = true;
      }
      buffer = buffer.slice(start);
    });
    res.on('end', () => resolve(finished));
    res.on('error', reject);
    res.on('aborted', () => resolve(finished));
  });
}

/** Calls `burst` on `s` and reads its stream to the result, recording latencies. */
export async function burst(url: URL, s: Session, count: number, size: number, latencies: Latencies | undefined, keepIds = 0): Promise<StreamRead> {
  const out: StreamRead = { notifications: 0, resumes: 0, firstId: '', lastIds: [] };
  let lastId = '';
  const onEvent = (id: string, data: string): boolean => {
    if (id !== '') lastId = id;
    if (out.firstId === '') out.firstId = id;
    if (keepIds > 0) {
      out.lastIds.push(id);
      if (out.lastIds.length > keepIds * 2) out.lastIds = out.lastIds.slice(-keepIds);
    }
    const t = data.indexOf('"t":');
    if (t !== -1) {
      out.notifications++;
      latencies?.add(clock() - Number.parseFloat(data.slice(t + 4, t + 30)));
      return false;
    }
    return data.includes('"result"') || data.includes('"error"');
  };
  let res = await send(
    url,
    'POST',
    { accept: ACCEPT, ...headers(s) },
    {
      jsonrpc: '2.0',
      id: nextId++,
      method: 'tools/call',
      params: { name: 'burst', arguments: { count, size } },
    },
  );
  if (res.statusCode !== 200) throw new Error(`burst: ${res.statusCode} ${(await text(res)).slice(0, 200)}`);
  while (!(await readEvents(res, onEvent))) {
    if (lastId === '' || ++out.resumes > 1000) throw new Error(`burst: stream ended after ${out.notifications} of ${count}`);
    res = await send(url, 'GET', { accept: 'text/event-stream', ...headers(s, { 'last-event-id': lastId }) });
    if (res.statusCode !== 200) throw new Error(`resume: ${res.statusCode} ${(await text(res)).slice(0, 200)}`);
  }
  if (out.notifications !== count) throw new Error(`burst: ${out.notifications} notifications, expected ${count}`);
  out.lastIds = out.lastIds.slice(-keepIds);
  return out;
}

/**
 * A GET resume from `lastEventId`: ms until `expect` events are read (a stream that stays
 * open, like the SDK's, is then dropped) or the response ends; the body of a refusal. A
 * server that sends fewer events and keeps the stream open is given `quietMs` of silence,
 * and the time is then taken at its last event.
 */
export async function replay(
  url: URL,
  s: Session,
  lastEventId: string,
  expect: number,
  quietMs = 2_000,
): Promise<{ events: number; ms: number; status: number; body: string }> {
  const started = performance.now();
  const res = await send(url, 'GET', { accept: 'text/event-stream', ...headers(s, { 'last-event-id': lastEventId }) });
  if (res.statusCode !== 200) {
    const body = await text(res);
    return { events: 0, ms: performance.now() - started, status: res.statusCode ?? 0, body };
  }
  let events = 0;
  let lastAt = performance.now();
  await new Promise<void>((resolve, reject) => {
    let timer = setTimeout(done, quietMs);
    function done(): void {
      clearTimeout(timer);
      res.destroy();
      resolve();
    }
    readEvents(res, () => {
      events++;
      lastAt = performance.now();
      if (events === expect) done();
      else {
        clearTimeout(timer);
        timer = setTimeout(done, quietMs);
      }
      return false;
    }).then(done, reject);
  });
  return { events, ms: lastAt - started, status: 200, body: '' };
}

export { send as rawSend, text as readText };
