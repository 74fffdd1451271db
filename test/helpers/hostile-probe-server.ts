/**
 * A small MCP Streamable HTTP server for the probe's own tests: sessions, an event log,
 * resumption, an `emit` tool (progress and `info` logs, a countable result), logging/setLevel,
 * DELETE, and a second port sharing everything (a "replica"). Well-behaved unless one
 * fault is chosen, each the shape of a wrong PASS the probe once gave. Real sockets.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { listenTracked, readBody } from './faulty/net.js';

export type ProbeFault =
  /** None: a server the probe must pass. */
  | 'none'
  /** On the replica port and after /restart, a resume gets one event, then an error response. */
  | 'hole-then-error'
  /** Session B presenting session A's cursor gets A's events, JSON keys in another order. */
  | 'foreign-leak'
  /** After DELETE, POSTs get 404 but a resume (GET + Last-Event-ID) is still served. */
  | 'resume-after-delete'
  /** /restart keeps sessions and logs but forgets every log level. */
  | 'forget-level-on-restart'
  /** Every tool call streams one `data:` line that never ends. */
  | 'endless-line'
  /** Every tool call streams small events that never end. */
  | 'endless-events'
  /** A resume on the replica port runs the cut call again (its run count goes up). */
  | 'rerun-on-replica'
  /** Stateless (no session, GET 405), and serverInfo.name is `bigName` bytes long: a large report, quickly. */
  | 'big-name';

interface Logged {
  seq: number;
  data: string;
  done: boolean;
}
interface Stream {
  events: Logged[];
  waiters: Set<() => void>;
  complete: boolean;
  rerun?: () => void;
}
interface Session {
  id: string;
  level: string | undefined;
  streams: Stream[];
  deleted: boolean;
  runs: number;
}

export interface HostileProbeServer {
  url: URL;
  replica: URL;
  /** POST here to "restart" (what that means depends on the fault). */
  restartUrl: URL;
  close(): Promise<void>;
}

const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

/** Reorders an object's keys (reversed), deeply: the same message, other bytes. */
function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reorder(v)]),
    );
  return value;
}

export async function startHostileProbeServer(fault: ProbeFault, options: { bigName?: number } = {}): Promise<HostileProbeServer> {
  const sessions = new Map<string, Session>();
  let restarted = false;
  let next = 0;
  const sockets = new Set<Socket>();

  const sse = (res: http.ServerResponse, sid: string): void =>
    void res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': sid, 'x-mcp-replay-epoch': 'hostile-epoch' });
  const frame = (sid: string, stream: number, e: Logged): string => `id: ${sid}.${stream}.${e.seq}\ndata: ${e.data}\n\n`;
  const append = (s: Session, stream: number, message: unknown, done = false): void => {
    const st = s.streams[stream] as Stream;
    st.events.push({ seq: st.events.length + 1, data: message === '' ? '' : JSON.stringify(message), done });
    if (done) st.complete = true;
    for (const w of st.waiters) w();
  };
  const json = (res: http.ServerResponse, status: number, body: unknown, sid?: string): void => {
    res.writeHead(status, { 'content-type': 'application/json', ...(sid ? { 'mcp-session-id': sid } : {}) }).end(JSON.stringify(body));
  };

  /** Writes stream `n` of `s` from after `seq` to its end, live. */
  function tail(res: http.ServerResponse, s: Session, n: number, after: number, rewrite: (e: Logged) => Logged = (e) => e): void {
    const st = s.streams[n] as Stream;
    let sent = after;
    const pump = (): void => {
      while (sent < st.events.length) {
        const e = st.events[sent++] as Logged;
        res.write(frame(s.id, n, rewrite(e)));
        if (e.done) return void res.end();
      }
    };
    st.waiters.add(pump);
    res.on('close', () => st.waiters.delete(pump));
    pump();
  }

  function runEmit(s: Session, n: number, id: unknown, args: { count?: number; intervalMs?: number }, token: unknown): void {
    const count = Math.min(args.count ?? 10, 1000);
    const interval = args.intervalMs ?? 0;
    s.runs++;
    let step = 0;
    const tick = (): void => {
      step++;
      const level = s.level === undefined ? 0 : LEVELS.indexOf(s.level);
      if (level <= 1) append(s, n, { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'emit', data: { seq: step } } });
      if (token !== undefined)
        append(s, n, { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: step, total: count } });
      if (step < count) return void (interval > 0 ? setTimeout(tick, interval) : setImmediate(tick));
      append(s, n, { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: `emitted ${count}` }], structuredContent: { runs: s.runs } } }, true);
    };
    setImmediate(tick);
  }

  async function post(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const body = await readBody(req);
    let m: { id?: unknown; method?: string; params?: Record<string, unknown> };
    try {
      m = JSON.parse(body) as typeof m;
    } catch {
      return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
    }
    if (Array.isArray(m)) return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'no batches' } });
    if (m.method === 'initialize') {
      const sid = `hostile-session-${++next}-${Math.random().toString(36).slice(2, 10)}`;
      sessions.set(sid, { id: sid, level: undefined, streams: [{ events: [], waiters: new Set(), complete: false }], deleted: false, runs: 0 });
      const name = fault === 'big-name' ? 'x'.repeat(options.bigName ?? 5_000_000) : 'hostile-probe';
      const result = {
        protocolVersion: (m.params?.['protocolVersion'] as string | undefined) ?? '2025-11-25',
        capabilities: { logging: {}, tools: {} },
        serverInfo: { name, version: '0' },
      };
      res.setHeader('x-mcp-replay-epoch', 'hostile-epoch');
      return json(res, 200, { jsonrpc: '2.0', id: m.id, result }, fault === 'big-name' ? undefined : sid);
    }
    if (fault === 'big-name') return m.id === undefined ? void res.writeHead(202).end() : json(res, 200, { jsonrpc: '2.0', id: m.id, result: {} });
    const s = sessions.get(String(req.headers['mcp-session-id']));
    if (!s || s.deleted)
      return json(res, s ? 404 : req.headers['mcp-session-id'] ? 404 : 400, {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32001, message: 'Session not found' },
      });
    if (m.id === undefined) return void res.writeHead(202).end();
    if (m.method === 'tools/list')
      return json(res, 200, { jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'emit', inputSchema: { type: 'object' } }] } }, s.id);
    if (m.method === 'logging/setLevel') {
      s.level = m.params?.['level'] as string;
      return json(res, 200, { jsonrpc: '2.0', id: m.id, result: {} }, s.id);
    }
    const n = s.streams.push({ events: [], waiters: new Set(), complete: false }) - 1;
    sse(res, s.id);
    if (m.method === 'tools/call' && (fault === 'endless-line' || fault === 'endless-events')) return endless(res);
    append(s, n, '');
    res.write('retry: 1000\n');
    if (m.method === 'tools/call') {
      const params = m.params ?? {};
      const token = (params['_meta'] as { progressToken?: unknown } | undefined)?.progressToken;
      runEmit(s, n, m.id, params['arguments'] ?? {}, token);
      (s.streams[n] as Stream).rerun = () =>
        runEmit(s, s.streams.push({ events: [], waiters: new Set(), complete: false }) - 1, m.id, params['arguments'] ?? {}, token);
    } else {
      append(s, n, { jsonrpc: '2.0', id: m.id, result: {} }, true);
    }
    tail(res, s, n, 0);
  }

  function endless(res: http.ServerResponse): void {
    const chunk =
      fault === 'endless-line'
        ? Buffer.alloc(64 * 1024, 'x')
        : Buffer.from('data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"tick"}}\n\n'.repeat(500));
    if (fault === 'endless-line') res.write('id: 1\ndata: ');
    let open = true;
    res.on('close', () => (open = false));
    const pump = (): void => {
      while (open) if (!res.write(chunk)) return void res.once('drain', pump);
    };
    pump();
  }

  function get(req: http.IncomingMessage, res: http.ServerResponse, replica: boolean): void {
    const s = sessions.get(String(req.headers['mcp-session-id']));
    const cursor = req.headers['last-event-id'];
    if (!s || (s.deleted && (fault !== 'resume-after-delete' || cursor === undefined)))
      return json(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
    if (typeof cursor !== 'string') {
      sse(res, s.id);
      return void res.write(`id: ${s.id}.0.0\nretry: 1000\ndata: \n\n`);
    }
    const m = /^(.+)\.(\d+)\.(\d+)$/.exec(cursor);
    const owner = m ? sessions.get(m[1] as string) : undefined;
    const n = Number(m?.[2]);
    if (!m || !owner || !owner.streams[n] || (owner !== s && fault !== 'foreign-leak'))
      return json(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32602, message: 'bad cursor', data: { reason: 'cursor-invalid' } } });
    sse(res, s.id);
    if (n === 0) return void res.write(': resumed\n\n');
    const st = owner.streams[n];
    if (fault === 'rerun-on-replica' && replica) st.rerun?.();
    if (fault === 'hole-then-error' && (replica || restarted)) {
      const after = st.events[Number(m[3])];
      if (after) res.write(frame(owner.id, n, after));
      const call = st.events.map((e) => (e.data ? (JSON.parse(e.data) as { id?: unknown }) : {})).find((x) => x.id !== undefined);
      return void res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: call?.id ?? null, error: { code: -32603, message: 'request abandoned' } })}\n\n`);
    }
    const rewrite = owner === s ? undefined : (e: Logged): Logged => ({ ...e, data: e.data ? JSON.stringify(reorder(JSON.parse(e.data))) : '' });
    tail(res, owner, n, Number(m[3]), rewrite);
  }

  const handler =
    (replica: boolean) =>
    (req: http.IncomingMessage, res: http.ServerResponse): void => {
      const origin = req.headers.origin;
      if (
        (origin !== undefined && !/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?$/.test(origin)) ||
        !/^(127\.0\.0\.1|localhost)(:\d+)?$/.test(req.headers.host ?? '')
      )
        return void res.writeHead(403).end();
      if (req.url === '/restart') {
        restarted = true;
        if (fault === 'forget-level-on-restart') for (const s of sessions.values()) s.level = undefined;
        return void res.end('restarted');
      }
      if (req.method === 'POST') return void post(req, res).catch(() => res.destroy());
      if (req.method === 'GET') return fault === 'big-name' ? void res.writeHead(405).end() : get(req, res, replica);
      if (req.method === 'DELETE') {
        const s = sessions.get(String(req.headers['mcp-session-id']));
        if (!s) return json(res, 404, { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
        s.deleted = true;
        return void res.writeHead(200).end();
      }
      res.writeHead(405).end();
    };
  const main = http.createServer(handler(false));
  const second = http.createServer(handler(true));
  const port = await listenTracked(main, sockets);
  const port2 = await listenTracked(second, sockets);
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    replica: new URL(`http://127.0.0.1:${port2}/mcp`),
    restartUrl: new URL(`http://127.0.0.1:${port}/restart`),
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all([main, second].map((x) => new Promise<void>((resolve) => x.close(() => resolve()))));
    },
  };
}

/** A `--restart-cmd` that POSTs to `url` (the server's /restart). */
export function restartCommand(url: URL): string {
  return `${JSON.stringify(process.execPath)} -e "fetch('${url.href}', { method: 'POST' }).then((r) => r.text()).then(() => process.exit(0), () => process.exit(1))"`;
}
