/**
 * The probe's HTTP side: one MCP exchange at a time over `fetch`, with SSE read event by
 * event so a check can cut a stream exactly where it wants, and trimmed evidence of every
 * request and response for the report.
 */
import { Header } from '../../protocol/headers.js';
import { createParser } from 'eventsource-parser';

/** One SSE event as received. */
export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
  /** `retry:` seen since the previous event. */
  retry: number | undefined;
}

/** A request and what came back. */
export interface Exchange {
  status: number;
  headers: Headers;
  /** The JSON body, for non-SSE responses (undefined if not JSON). */
  json: unknown;
  /** SSE events read (all, or up to where the reader stopped). */
  events: SseEvent[];
  /** Why reading stopped: the server ended the stream, the caller cut it, or nothing came for a while. */
  ended: 'end' | 'cut' | 'idle' | 'not-sse';
  /** Trimmed request and response, for the report. */
  evidence: string;
}

/** What a request sends. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
  url: URL;
  headers?: Record<string, string>;
  body?: unknown;
  /** Stop reading (and drop the connection) once this returns true. */
  cutWhen?: (events: SseEvent[]) => boolean;
  /** Stop reading a stream that has been silent this long, ms. */
  idleMs?: number;
  /** Called once the response head has arrived (the stream is open). */
  onOpen?: (status: number) => void;
}

export const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

const EVIDENCE_LIMIT = 1200;

/** Sends one request; never throws for HTTP-level outcomes, only for unreachable servers. */
export async function exchange(spec: RequestSpec, timeoutMs: number): Promise<Exchange> {
  const controller = new AbortController();
  const overall = setTimeout(() => controller.abort(), timeoutMs);
  const headers: Record<string, string> = { ...(spec.method === 'GET' ? { accept: 'text/event-stream' } : MCP_HEADERS), ...spec.headers };
  const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
  const request = `${spec.method} ${spec.url.pathname}${spec.url.search}\n${Object.entries(headers)
    .filter(([k]) => k !== 'accept' && k !== 'content-type')
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}${body ? `\n\n${body}` : ''}`;
  try {
    const response = await fetch(spec.url, { method: spec.method, headers, body: body ?? null, signal: controller.signal, redirect: 'manual' });
    spec.onOpen?.(response.status);
    const type = response.headers.get('content-type') ?? '';
    const head = `HTTP ${response.status}${headerLines(response.headers)}`;
    if (!type.includes('text/event-stream')) {
      const text = await response.text().catch(() => '');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: response.status, headers: response.headers, json, events: [], ended: 'not-sse', evidence: evidence(request, `${head}\n\n${text}`) };
    }
    const { events, ended, raw } = await readSse(response, controller, spec);
    return { status: response.status, headers: response.headers, json: undefined, events, ended, evidence: evidence(request, `${head}\n\n${raw}`) };
  } catch (error) {
    if (controller.signal.aborted) throw new ProbeTimeout(`${spec.method} ${spec.url.href}: no answer within ${timeoutMs} ms`);
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new ProbeUnreachable(`${spec.method} ${spec.url.href}: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
  } finally {
    clearTimeout(overall);
  }
}

/** The server did not answer in time. */
export class ProbeTimeout extends Error {
  override name = 'ProbeTimeout';
}

/** The server could not be reached at all. */
export class ProbeUnreachable extends Error {
  override name = 'ProbeUnreachable';
}

async function readSse(response: Response, controller: AbortController, spec: RequestSpec): Promise<{ events: SseEvent[]; ended: Exchange['ended']; raw: string }> {
  const events: SseEvent[] = [];
  let retry: number | undefined;
  let raw = '';
  const parser = createParser({
    onEvent: (e) => {
      events.push({ id: e.id, event: e.event, data: e.data, retry });
      retry = undefined;
    },
    onRetry: (ms) => {
      retry = ms;
    },
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const idleMs = spec.idleMs ?? 2000;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = new Promise<'idle'>((resolve) => {
      timer = setTimeout(() => resolve('idle'), idleMs);
    });
    const next = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
    if (next === 'idle') {
      controller.abort();
      return { events, ended: 'idle', raw };
    }
    if (next.done) return { events, ended: 'end', raw };
    const text = decoder.decode(next.value, { stream: true });
    if (raw.length < EVIDENCE_LIMIT) raw += text;
    parser.feed(text);
    if (spec.cutWhen?.(events)) {
      controller.abort();
      await reader.cancel().catch(() => undefined);
      return { events, ended: 'cut', raw };
    }
  }
}

const SHOWN_HEADERS = ['content-type', Header.SessionId, Header.ReplayEpoch, Header.ProtocolVersion, 'retry-after'];

function headerLines(headers: Headers): string {
  return SHOWN_HEADERS.map((h) => (headers.get(h) === null ? '' : `\n${h}: ${headers.get(h)}`)).join('');
}

function evidence(request: string, response: string): string {
  const trim = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n)}… (${s.length - n} more chars)` : s);
  return `${trim(request, 500)}\n---\n${trim(response, EVIDENCE_LIMIT)}`;
}

/** A JSON-RPC message from an SSE event's data, or undefined (priming events carry none). */
export function messageOf(event: SseEvent): Record<string, unknown> | undefined {
  if (event.data.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(event.data);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A POST with a chosen `Host` header (which `fetch` does not let callers set). Resolves to its status and evidence. */
export async function postWithHost(url: URL, host: string, body: unknown, timeoutMs: number, headers: Record<string, string> = {}): Promise<{ status: number; evidence: string }> {
  const { request } = await import('node:http');
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, ...MCP_HEADERS, host }, timeout: timeoutMs }, (res) => {
      let received = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (received.length < EVIDENCE_LIMIT) received += chunk;
        // An accepted request opens a stream; its head and first bytes are all the check needs.
        if (res.statusCode === 200) res.destroy();
      });
      const done = (): void => resolve({ status: res.statusCode ?? 0, evidence: evidence(`POST ${url.pathname}\nhost: ${host}\n\n${text}`, `HTTP ${res.statusCode}\n\n${received}`) });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('timeout', () => req.destroy(new ProbeTimeout(`POST ${url.href}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(text);
  });
}
