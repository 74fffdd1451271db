/**
 * A hand-written, deliberately small Streamable HTTP MCP server (plain `node:http`) that
 * speaks just enough of the protocol for the official SDK v1 `Client`, with integer event
 * IDs from one counter, and knobs to reproduce seed 000's three failure signatures:
 *
 * - `initialize` (JSON or SSE answer, `Mcp-Session-Id`, protocol 2025-06-18: no priming),
 *   `notifications/initialized` → 202, `tools/list`, `ping`, and a tool `count` whose call
 *   streams `n` `notifications/message` events on the POST's SSE stream, then the result;
 * - `GET` + `Last-Event-ID` resumes: a cursor found in the buffer replays what follows it
 *   (healthy); an unknown cursor answers 200 and "starts fresh" — junk events with IDs
 *   straight from the counter (the fault);
 * - `GET` without a cursor is the standalone stream (idle);
 * - `sessions: 'strict'` answers 404 for an unknown `Mcp-Session-Id`; `'permissive'` adopts
 *   it as a new session (seed 000's "session resurrection"), echoing the same ID or a fresh one.
 *
 * A "restart" replaces the in-memory state (keeping the counter and/or the session table
 * if asked: a persisted counter with an emptied buffer is seed 000's gap signature) and
 * destroys every open socket. `toolRuns` counts how often the tool body actually ran (the
 * side effect), across restarts.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readBody } from './net.js';

export const FAULTY_PROTOCOL_VERSION = '2025-06-18';

/** `data` of every `notifications/message` this server sends. */
export interface EventData {
  /** Unique across the server's life (restarts included): a delivered twice is a duplicate. */
  seq: number;
  /** The server (replica) that produced it. */
  origin: string;
  /** Events of a stream started on an unknown cursor: must never reach the application. */
  junk?: true;
  /** The tool call (1-based, per server) that produced it; absent for junk. */
  call?: number;
  /** Position of the event in its call, 1-based. */
  index?: number;
}

export interface RestartOptions {
  /** The session table survives (persisted) — else every session is forgotten. */
  keepSessions: boolean;
  /** The event-ID counter survives (persisted) — else it restarts at 0. */
  keepCounter: boolean;
}

export interface CutPlan {
  /** Events written to the POST stream before the cut. */
  after: number;
  /** Resolves once the client has seen those events (default: 30 ms). The cut waits for it. */
  when?: Promise<unknown>;
  /**
   * Events the old process still produces into its buffer after the cut, before the
   * restart (seed 000: "events 1042–1050 in the old process"). Only with `restart`.
   */
  lostEvents?: number;
  /** Restart at the cut (destroys every socket); without it only the POST's socket is destroyed. */
  restart?: RestartOptions;
}

export interface FaultyServerOptions {
  /** Tag of the events' `origin` and of `serverInfo.name` (default 'A'). */
  name?: string;
  /** What an unknown `Mcp-Session-Id` gets (default 'strict': 404). */
  sessions?: 'strict' | 'permissive';
  /** A permissive server adopting an unknown session: echo the same ID (default) or assign a fresh one. */
  resurrect?: 'same-id' | 'fresh-id';
  /** How `initialize` is answered (default 'json'). */
  initializeAnswer?: 'json' | 'sse';
  /** A healthy resume replays the `Last-Event-ID` event itself too (allowed; the client drops it). */
  replayBoundary?: boolean;
  /** Junk events sent on a stream started for an unknown cursor (default 3). */
  junkEvents?: number;
  /** Delay between the events of a call, ms (default 0; after a cut: 3). */
  intervalMs?: number;
  /**
   * The first this many resumes (GET with a cursor) get 409 Conflict, as a server that has
   * not yet seen the cut connection close answers while it still holds the stream.
   */
  conflictResumes?: number;
}

/** One request as the server saw it. */
export interface SeenRequest {
  method: string;
  rpc?: string;
  rpcId?: string | number | null;
  sessionId?: string;
  lastEventId?: string;
  status: number;
  /** State generation (restarts so far) that answered. */
  generation: number;
}

interface StoredEvent {
  id: number;
  data: string;
}

interface Stream {
  events: StoredEvent[];
  res: http.ServerResponse | undefined;
  complete: boolean;
}

interface State {
  generation: number;
  counter: number;
  sessions: Set<string>;
  streams: Stream[];
}

type Json = Record<string, unknown>;

export class FaultyServer {
  readonly name: string;
  readonly #options: FaultyServerOptions;
  readonly #server: http.Server;
  readonly #sockets = new Set<Socket>();
  #state: State = { generation: 0, counter: 0, sessions: new Set(), streams: [] };
  #cut: CutPlan | undefined;
  #hold: Promise<unknown> | undefined;
  readonly #standalone = new Set<http.ServerResponse>();
  #seq = 0;
  /** Resumes refused with 409 so far (see {@link FaultyServerOptions.conflictResumes}). */
  #conflicts = 0;
  #calls = 0;
  url!: URL;
  /** How many times the tool body ran (the side effect), across restarts. */
  toolRuns = 0;
  /** Every `initialize` that reached this server, across restarts. */
  initializeCount = 0;
  readonly requests: SeenRequest[] = [];
  /** Junk events sent (on streams started for an unknown cursor), by their `seq`. */
  readonly junkSeqs: number[] = [];
  /** Called after a restart (the test's hook). */
  onRestart?: () => void;

  constructor(options: FaultyServerOptions = {}) {
    this.#options = options;
    this.name = options.name ?? 'A';
    this.#server = http.createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(error));
        } else res.destroy();
      });
    });
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const address = this.#server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    this.url = new URL(`http://127.0.0.1:${address.port}/mcp`);
    return this;
  }

  get port(): number {
    return Number(this.url.port);
  }
  get generation(): number {
    return this.#state.generation;
  }
  get counter(): number {
    return this.#state.counter;
  }
  get sessions(): ReadonlySet<string> {
    return this.#state.sessions;
  }
  /** GET requests seen, with and without a cursor. */
  gets(withCursor?: boolean): SeenRequest[] {
    return this.requests.filter((r) => r.method === 'GET' && (withCursor === undefined || (r.lastEventId !== undefined) === withCursor));
  }

  /** The next `count` call is cut as planned. */
  armCut(plan: CutPlan): void {
    this.#cut = plan;
  }

  /** The next `tools/call` POST waits for `until` before answering anything (its response headers are held). */
  holdNextCall(until: Promise<unknown>): void {
    this.#hold = until;
  }

  /** Destroys the sockets of the open standalone GET streams; returns how many. */
  cutStandalone(): number {
    const open = [...this.#standalone];
    for (const res of open) res.socket?.destroy();
    return open.length;
  }

  /** A process restart: new in-memory state (keeping what is asked), every socket destroyed. */
  restart(options: RestartOptions): void {
    const old = this.#state;
    this.#state = {
      generation: old.generation + 1,
      counter: options.keepCounter ? old.counter : 0,
      sessions: options.keepSessions ? new Set(old.sessions) : new Set(),
      streams: [],
    };
    for (const socket of this.#sockets) socket.destroy();
    this.onRestart?.();
  }

  /** The session table is emptied (eviction), open connections are kept. */
  forgetSessions(): void {
    this.#state.sessions.clear();
  }

  async close(): Promise<void> {
    for (const stream of this.#state.streams) stream.res = undefined;
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const state = this.#state;
    const seen: SeenRequest = { method: req.method ?? '', status: 0, generation: state.generation };
    const header = (name: string): string | undefined => {
      const v = req.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    const sessionHeader = header('mcp-session-id');
    const lastEventId = header('last-event-id');
    if (sessionHeader !== undefined) seen.sessionId = sessionHeader;
    if (lastEventId !== undefined) seen.lastEventId = lastEventId;
    this.requests.push(seen);
    const reply = (status: number, body?: Json, headers: Record<string, string> = {}): void => {
      seen.status = status;
      if (body === undefined) {
        res.writeHead(status, headers).end();
        return;
      }
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };

    if (req.method === 'POST') {
      const text = await readBody(req);
      let message: Json;
      try {
        message = JSON.parse(text) as Json;
      } catch {
        return reply(400, rpcError(null, -32700, 'Parse error'));
      }
      const rpc = typeof message.method === 'string' ? message.method : undefined;
      const id = message.id as string | number | undefined;
      if (rpc !== undefined) seen.rpc = rpc;
      if (id !== undefined) seen.rpcId = id;
      if (rpc === 'initialize' && id !== undefined) {
        const sessionId = randomUUID();
        state.sessions.add(sessionId);
        this.initializeCount++;
        const result = rpcResult(id, {
          protocolVersion: FAULTY_PROTOCOL_VERSION,
          capabilities: { tools: {}, logging: {} },
          serverInfo: { name: `faulty-${this.name}`, version: '1.0.0' },
        });
        if (this.#options.initializeAnswer === 'sse') {
          seen.status = 200;
          openSse(res, { 'mcp-session-id': sessionId });
          res.end(sseEvent(undefined, JSON.stringify(result)));
          return;
        }
        return reply(200, result, { 'mcp-session-id': sessionId });
      }
      const session = this.#session(sessionHeader);
      if (session === undefined) {
        return sessionHeader === undefined
          ? reply(400, rpcError(null, -32000, 'Bad Request: Mcp-Session-Id header is required'))
          : reply(404, rpcError(null, -32001, 'Session not found'));
      }
      const echo = { 'mcp-session-id': session };
      if (rpc === undefined || id === undefined) return reply(202, undefined, echo); // notification or response
      switch (rpc) {
        case 'ping':
          return reply(200, rpcResult(id, {}), echo);
        case 'tools/list':
          return reply(200, rpcResult(id, { tools: [COUNT_TOOL] }), echo);
        case 'tools/call': {
          const params = (message.params ?? {}) as { name?: unknown; arguments?: { n?: unknown } };
          if (params.name !== 'count') return reply(200, rpcError(id, -32602, `Unknown tool ${String(params.name)}`), echo);
          const n = typeof params.arguments?.n === 'number' ? params.arguments.n : 5;
          const hold = this.#hold;
          this.#hold = undefined;
          if (hold !== undefined) {
            await hold;
            if (res.destroyed || req.socket.destroyed) return; // the client gave up on it while held
          }
          seen.status = 200;
          openSse(res, echo);
          await this.#runCount(state, res, id, n);
          return;
        }
        default:
          return reply(200, rpcError(id, -32601, `Method not found: ${rpc}`), echo);
      }
    }

    if (req.method === 'GET') {
      const session = this.#session(sessionHeader);
      if (session === undefined) {
        return sessionHeader === undefined
          ? reply(400, rpcError(null, -32000, 'Bad Request: Mcp-Session-Id header is required'))
          : reply(404, rpcError(null, -32001, 'Session not found'));
      }
      if (lastEventId !== undefined && this.#conflicts < (this.#options.conflictResumes ?? 0)) {
        this.#conflicts++;
        return reply(409, rpcError(null, -32000, 'Conflict: Stream already has an active connection'));
      }
      seen.status = 200;
      openSse(res, { 'mcp-session-id': session });
      if (lastEventId === undefined) {
        // The standalone stream: idle until the client leaves.
        this.#standalone.add(res);
        res.on('close', () => this.#standalone.delete(res));
        return;
      }
      const last = Number(lastEventId);
      const stream = state.streams.find((s) => s.events.some((e) => e.id === last));
      if (stream === undefined) {
        // The fault: an unknown cursor "starts fresh", IDs straight from the counter.
        const junk = this.#options.junkEvents ?? 3;
        for (let i = 0; i < junk; i++) {
          const seq = ++this.#seq;
          this.junkSeqs.push(seq);
          const data: EventData = { seq, origin: this.name, junk: true };
          res.write(sseEvent(++state.counter, JSON.stringify(notification(data))));
        }
        return; // stays open until the client leaves
      }
      const from = this.#options.replayBoundary === true ? last : last + 1;
      for (const e of stream.events) if (e.id >= from) res.write(sseEvent(e.id, e.data));
      if (stream.complete) {
        res.end();
        return;
      }
      stream.res = res;
      res.on('close', () => {
        if (stream.res === res) stream.res = undefined;
      });
      return;
    }

    if (req.method === 'DELETE') {
      if (sessionHeader !== undefined && state.sessions.delete(sessionHeader)) return reply(200);
      return reply(404, rpcError(null, -32001, 'Session not found'));
    }
    reply(405, undefined, { allow: 'GET, POST, DELETE' });
  }

  /** The session a request belongs to (adopting an unknown one if permissive), or undefined. */
  #session(id: string | undefined): string | undefined {
    if (id === undefined) return undefined;
    const state = this.#state;
    if (state.sessions.has(id)) return id;
    if (this.#options.sessions !== 'permissive') return undefined;
    // Seed 000's "session resurrection": a stale ID is taken for a new session.
    const adopted = this.#options.resurrect === 'fresh-id' ? randomUUID() : id;
    state.sessions.add(adopted);
    return adopted;
  }

  /** The tool `count`: `n` logging notifications on the POST's stream, then the result. */
  async #runCount(state: State, res: http.ServerResponse, id: string | number, n: number): Promise<void> {
    this.toolRuns++;
    const call = ++this.#calls;
    const cut = this.#cut;
    this.#cut = undefined;
    const stream: Stream = { events: [], res, complete: false };
    state.streams.push(stream);
    res.on('close', () => {
      if (stream.res === res) stream.res = undefined;
    });
    const emit = (payload: Json): void => {
      const event = { id: ++state.counter, data: JSON.stringify(payload) };
      stream.events.push(event);
      stream.res?.write(sseEvent(event.id, event.data));
    };
    let interval = this.#options.intervalMs ?? 0;
    for (let index = 1; index <= n; index++) {
      if (this.#state !== state) return; // the process "died": this body stops with it
      emit(notification({ seq: ++this.#seq, origin: this.name, call, index }));
      if (cut !== undefined && index === cut.after) {
        await (cut.when ?? delay(30));
        stream.res?.socket?.destroy();
        stream.res = undefined;
        if (cut.restart) {
          for (let i = 0; i < (cut.lostEvents ?? 0); i++) emit(notification({ seq: ++this.#seq, origin: this.name, call, index: n + i + 1 }));
          this.restart(cut.restart);
          return;
        }
        interval = Math.max(interval, 3);
      }
      if (interval > 0) await delay(interval);
    }
    if (this.#state !== state) return;
    emit(rpcResult(id, { content: [{ type: 'text', text: `counted ${n}` }] }));
    stream.complete = true;
    stream.res?.end();
    stream.res = undefined;
  }
}

export async function startFaultyServer(options: FaultyServerOptions = {}): Promise<FaultyServer> {
  return new FaultyServer(options).listen();
}

const COUNT_TOOL = {
  name: 'count',
  description: 'Streams n logging notifications, then answers',
  inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
};

function notification(data: EventData): Json {
  return { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', logger: 'count', data } };
}

function rpcResult(id: string | number, result: Json): Json {
  return { jsonrpc: '2.0', id, result };
}

function rpcError(id: string | number | null, code: number, message: string): Json {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function openSse(res: http.ServerResponse, headers: Record<string, string>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...headers });
  res.flushHeaders();
}

function sseEvent(id: number | undefined, data: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}data: ${data}\n\n`;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
