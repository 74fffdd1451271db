/**
 * The browser test's server: one `node:http` server that serves the page and its bundle and
 * answers `/mcp` with a real endpoint (the example server), with the CORS settings that
 * docs/frameworks.md documents, and faults on demand: a tools/call stream cut after its
 * Nth progress notification, and a resume whose first replayed event is altered (so its
 * hash chain breaks). `/mcp-nocors` is the same endpoint without any CORS settings.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createExampleServer } from '../../src/example/index.js';
import { toRequest, writeResponse } from '../../src/node/adapter.js';
import { createEndpoint, type Endpoint } from '../../src/server/index.js';

/** The documented CORS settings (docs/frameworks.md, "Browsers (CORS)"). */
const ALLOW_METHODS = 'GET, POST, DELETE';
const ALLOW_HEADERS = 'content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id';
const EXPOSE_HEADERS = 'mcp-session-id, x-mcp-replay-epoch';

export interface Faults {
  /** Cut the next tools/call stream after this many progress notifications. */
  cutAfterProgress?: number | undefined;
  /** Alter the first event of the next resume (a request with Last-Event-ID). */
  tamperResume?: boolean | undefined;
}

export interface Front {
  /** The endpoint's origin (http://127.0.0.1:<port>). */
  readonly origin: string;
  /** The other origin that CORS allows (http://localhost:<port>). */
  readonly crossOrigin: string;
  readonly endpoint: Endpoint;
  faults: Faults;
  /** Cuts made, and resumes seen (their Last-Event-ID). */
  readonly cuts: number;
  readonly resumes: string[];
  readonly preflights: number;
  /** GETs that asked for the WebSocket upgrade. */
  readonly upgradeAsks: number;
  close(): Promise<void>;
}

/** Passes a response's SSE events one by one: altered, or cut after the Nth progress. */
function watch(front: { cuts: number }, cutAfter: number | undefined, tamper: boolean): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = '';
  let progress = 0;
  let cutDue = false;
  let tampered = !tamper;
  return new TransformStream({
    transform(chunk, controller) {
      // Cut on the chunk after the Nth progress, so that one was written out first.
      if (cutDue) {
        front.cuts++;
        controller.error(new Error('cut by the test'));
        return;
      }
      text += decoder.decode(chunk, { stream: true });
      for (let end = text.indexOf('\n\n'); end >= 0; end = text.indexOf('\n\n')) {
        let event = text.slice(0, end + 2);
        text = text.slice(end + 2);
        if (!tampered && event.includes('data: {')) {
          event = event.replace('"jsonrpc":"2.0"', '"jsonrpc":"2.0","tampered":true');
          tampered = true;
        }
        controller.enqueue(encoder.encode(event));
        if (event.includes('"notifications/progress"') && ++progress === cutAfter) cutDue = true;
      }
    },
  });
}

/**
 * Serves `page` and `bundle` on 127.0.0.1 and localhost alike. The endpoint's own origin is
 * http://127.0.0.1:<port>; http://localhost:<port> is another origin, the one CORS allows.
 */
export async function startFront(page: string, bundle: string): Promise<Front> {
  const made: { endpoint?: Endpoint; allowed?: string } = {};
  const state = { cuts: 0, resumes: [] as string[], preflights: 0, upgradeAsks: 0, faults: {} as Faults };
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      return;
    }
    if (path === '/bundle.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
      return;
    }
    const endpoint = made.endpoint;
    if ((path !== '/mcp' && path !== '/mcp-nocors') || !endpoint) {
      res.writeHead(404).end();
      return;
    }
    const cors = path === '/mcp' && req.headers.origin === made.allowed ? made.allowed : undefined;
    if (cors !== undefined && req.method === 'OPTIONS') {
      state.preflights++;
      res
        .writeHead(204, {
          'access-control-allow-origin': cors,
          'access-control-allow-methods': ALLOW_METHODS,
          'access-control-allow-headers': ALLOW_HEADERS,
          vary: 'origin',
        })
        .end();
      return;
    }
    void (async () => {
      const request = toRequest(req, res);
      const lastEventId = request.headers.get('last-event-id');
      if (lastEventId !== null) state.resumes.push(lastEventId);
      if (request.headers.get('x-mcp-upgrade') === 'websocket') state.upgradeAsks++;
      const isCall = req.method === 'POST' && (await request.clone().text()).includes('"tools/call"');
      const cutAfter = isCall ? state.faults.cutAfterProgress : undefined;
      const tamper = lastEventId !== null && state.faults.tamperResume === true;
      if (cutAfter !== undefined) state.faults.cutAfterProgress = undefined;
      if (tamper) state.faults.tamperResume = false;
      const response = await endpoint.handle(request);
      const headers = new Headers(response.headers);
      if (cors !== undefined) {
        headers.set('access-control-allow-origin', cors);
        headers.set('access-control-expose-headers', EXPOSE_HEADERS);
        headers.set('vary', 'origin');
      }
      const body = response.body && (cutAfter !== undefined || tamper) ? response.body.pipeThrough(watch(state, cutAfter, tamper)) : response.body;
      await writeResponse(res, new Response(body, { status: response.status, headers }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const crossOrigin = `http://localhost:${port}`;
  made.allowed = crossOrigin;
  const endpoint = createEndpoint({
    server: () => createExampleServer(),
    retryMs: 20,
    // Offered to whoever asks: a browser client must not ask (it cannot complete the handshake).
    upgrade: { websocket: true },
    // An explicit guard replaces the default: the endpoint's own origin is listed too.
    hostGuard: { allowedHosts: [`127.0.0.1:${port}`], allowedOrigins: [origin, crossOrigin] },
  });
  made.endpoint = endpoint;
  return {
    origin,
    crossOrigin,
    endpoint,
    get faults() {
      return state.faults;
    },
    set faults(faults: Faults) {
      state.faults = faults;
    },
    get cuts() {
      return state.cuts;
    },
    resumes: state.resumes,
    get upgradeAsks() {
      return state.upgradeAsks;
    },
    get preflights() {
      return state.preflights;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await endpoint.close();
    },
  };
}
