/**
 * Adversarial requests against a guarded server process: cursors that are forged, foreign
 * (another session's), future, trimmed, of an earlier epoch (after the test hook reset the
 * log) or with a tampered chain must each get their own refusal — never a 200 — while a
 * valid cursor (the control) replays exactly what follows it; and a matrix of bad Hosts
 * and Origins gets 403 while good ones pass. Malformed Hosts (empty, `a b`, `[`, …) are
 * a separate scenario: a server that crashes on them fails it.
 */
import { request } from 'node:http';
import { formatEventId, parseEventId } from '../../../src/protocol/event-id.js';
import { prng } from '../../helpers/prng.js';
import { initialize, rpc, send, sessionHeaders, type Handshake } from '../../helpers/sse-client.js';
import { checkHistory, ZERO } from './check.js';
import { startServer, type ServerProcess } from './servers.js';
import type { Family, RunResult, Scenario } from './types.js';

const RETAINED = 20;
const PRODUCED = 30;

interface Produced {
  h: Handshake;
  /** Event ids by `produce` seq (index 0 unused); the stream's own seqs are one higher (its priming event is seq 1). */
  ids: string[];
}

const seqOfData = (data: string): number | undefined => {
  try {
    return (JSON.parse(data) as { params?: { data?: { seq?: number } } }).params?.data?.seq;
  } catch {
    return undefined;
  }
};

async function produce(url: URL, run: string, count: number): Promise<Produced> {
  const h = await initialize(url);
  const response = await send(url, { body: rpc('tools/call', { name: 'produce', arguments: { run, count } }), headers: sessionHeaders(h) });
  const ids: string[] = [];
  for (const e of response.events) {
    const seq = seqOfData(e.data);
    if (e.id && seq !== undefined) ids[seq] = e.id;
  }
  return { h, ids };
}

function reasonOf(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { error?: { data?: { reason?: string } } }).error?.data?.reason;
  } catch {
    return undefined;
  }
}

export const CURSOR_KINDS = ['forged', 'foreign', 'future', 'trimmed', 'other-epoch', 'tampered-chain', 'valid'] as const;

/** One raw HTTP request with exactly the Host and Origin given (undefined: none). */
function rawStatus(url: URL, host: string | undefined, origin: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (origin !== undefined) headers.origin = origin;
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, setHost: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    if (host !== undefined) req.setHeader('host', host);
    req.on('error', reject);
    req.end(JSON.stringify(rpc('ping')));
  });
}

export function adversarialFamily(options: { malformedHosts?: boolean } = {}): Family {
  let server: ServerProcess | undefined;
  return {
    name: 'adversarial',
    async setup() {
      server = await startServer({ store: 'memory', retention: { maxEvents: RETAINED }, retryMs: 5 });
      const url = server.url;
      const a = await produce(url, 'a', PRODUCED);
      const b = await produce(url, 'b', 5);
      const c = await produce(url, 'c', 5);
      const reset = await fetch(new URL(`/__reset?session=${c.h.sessionId}`, url), { method: 'POST' });
      if (reset.status !== 204) throw new Error(`the reset hook answered ${reset.status}`);
      const last = parseEventId(a.ids[PRODUCED] as string);
      const expected: Record<(typeof CURSOR_KINDS)[number], { status: number; reason?: string }> = {
        forged: { status: 400, reason: 'cursor-invalid' },
        foreign: { status: 400, reason: 'cursor-invalid' },
        future: { status: 409, reason: 'cursor-ahead' },
        trimmed: { status: 410, reason: 'replay-window-exceeded' },
        'other-epoch': { status: 409, reason: 'replay-epoch-mismatch' },
        'tampered-chain': { status: 400, reason: 'cursor-invalid' },
        valid: { status: 200 },
      };
      const cursor = (kind: (typeof CURSOR_KINDS)[number], rand: () => number): { session: Handshake; id: string; after?: number } => {
        const pick = (from: number, to: number): number => from + Math.floor(rand() * (to - from + 1));
        switch (kind) {
          case 'forged': {
            const n = pick(1, 120);
            let s = '';
            for (let i = 0; i < n; i++) s += String.fromCharCode(pick(0x21, 0x7e));
            return { session: a.h, id: s };
          }
          case 'foreign':
            return { session: a.h, id: b.ids[pick(1, 5)] as string };
          case 'future':
            return { session: a.h, id: formatEventId({ ...last, seq: last.seq + pick(1, 1000) }) };
          case 'trimmed':
            return { session: a.h, id: a.ids[pick(1, PRODUCED - RETAINED - 1)] as string };
          case 'other-epoch':
            return { session: c.h, id: c.ids[pick(1, 5)] as string };
          case 'tampered-chain': {
            const at = parseEventId(a.ids[pick(PRODUCED - RETAINED + 2, PRODUCED)] as string);
            const flip = pick(0, at.chain.length - 1);
            const ch = at.chain[flip] === 'A' ? 'B' : 'A';
            return { session: a.h, id: formatEventId({ ...at, chain: at.chain.slice(0, flip) + ch + at.chain.slice(flip + 1) }) };
          }
          case 'valid': {
            // Retention keeps the last RETAINED events of the stream: produce seqs from PRODUCED - RETAINED + 2 on.
            const after = pick(PRODUCED - RETAINED + 2, PRODUCED - 1);
            return { session: a.h, id: a.ids[after] as string, after };
          }
        }
      };
      const scenarios: Scenario[] = CURSOR_KINDS.map((kind) => ({
        name: `cursor/${kind}`,
        async run(seed): Promise<RunResult> {
          const { session, id, after } = cursor(kind, prng(seed));
          const response = await send(url, { headers: { ...sessionHeaders(session), 'last-event-id': id }, timeoutMs: 5000 });
          const want = expected[kind];
          if (after !== undefined) {
            // The control: exactly the events after the cursor, then the stream ends.
            const seqs = response.events
              .map((e) => seqOfData(e.data))
              .filter((s): s is number => s !== undefined)
              .map((s) => s - after);
            const counts = checkHistory(PRODUCED - after, seqs, true);
            const failure = response.status === 200 ? undefined : `the valid cursor got ${response.status}`;
            return { counts, outcome: String(response.status), landed: true, failure };
          }
          const reason = reasonOf(response.text);
          const counts = { ...ZERO, unexpected: response.status === 200 ? response.events.length || 1 : 0 };
          const failure =
            response.status === want.status && reason === want.reason
              ? undefined
              : `expected ${want.status} ${want.reason}, got ${response.status} ${reason ?? ''}`;
          return { counts, outcome: reason ?? String(response.status), landed: true, failure };
        },
      }));
      const port = Number(url.port);
      const goodHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
      const badHosts = [
        'evil.com',
        `evil.com:${port}`,
        'localhost:1',
        `127.0.0.1:${port + 1}`,
        `127.0.0.1.evil.com:${port}`,
        `[::2]:${port}`,
        `localhost.evil:${port}`,
      ];
      const goodOrigins = [undefined, `http://127.0.0.1:${port}`, `http://localhost:${port}`];
      const badOrigins = ['http://evil.com', 'null', 'http://localhost:1', `http://127.0.0.1:${port}.evil.com`, `http://127.0.0.1:${port}@evil.com`, `file://`];
      scenarios.push({
        name: 'host-origin/matrix',
        async run(seed): Promise<RunResult> {
          const rand = prng(seed);
          const choose = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
          const badHost = rand() < 0.5;
          const badOrigin = rand() < 0.5;
          const host = badHost ? choose(badHosts) : choose(goodHosts);
          const origin = badOrigin ? choose(badOrigins) : choose(goodOrigins);
          const status = await rawStatus(url, host, origin);
          // A good Host and Origin pass the guard (the ping then gets 400 session-required).
          const refused = status === 403;
          const failure = refused === (badHost || badOrigin) ? undefined : `Host ${host} Origin ${String(origin)}: got ${status}`;
          return { counts: ZERO, outcome: String(status), landed: true, failure };
        },
      });
      if (options.malformedHosts) {
        const malformed = ['', 'a b', '[', '%zz', '<x>', 'a^b', `u@localhost:${port}`, 'localhost:99999', ':::'];
        scenarios.push({
          name: 'host-origin/malformed',
          async run(seed): Promise<RunResult> {
            const host = malformed[Math.floor(prng(seed)() * malformed.length)] as string;
            const status = await rawStatus(url, host, undefined).catch(() => 0);
            const alive = await rawStatus(url, `127.0.0.1:${port}`, undefined).catch(() => 0);
            // A good Host passes the guard (then 400 session-required): any answer but 403 is alive.
            const failure =
              alive === 0 || alive === 403
                ? `the server stopped answering after Host ${JSON.stringify(host)}`
                : status !== 400 && status !== 403
                  ? `Host ${JSON.stringify(host)} got ${status}`
                  : undefined;
            return { counts: ZERO, outcome: String(status), landed: true, failure };
          },
        });
      }
      return scenarios;
    },
    async teardown() {
      await server?.kill();
    },
  };
}
