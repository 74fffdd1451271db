/**
 * The probe's HTTP side: one MCP exchange at a time over `fetch`, with SSE read event by
 * event so a check can cut a stream exactly where it wants, and trimmed evidence of every
 * request and response for the report.
 */
import { Header } from '../../protocol/headers.js';
import { READ_LIMITS, readSseBounded, readTextBounded, type Ended, type SseEvent } from './sse-read.js';

export type { SseEvent } from './sse-read.js';

/** A request and what came back. */
export interface Exchange {
  status: number;
  headers: Headers;
  /** The JSON body, for non-SSE responses (undefined if not JSON). */
  json: unknown;
  /** SSE events read (all, or up to where the reader stopped). */
  events: SseEvent[];
  /** Why reading stopped: the server ended the stream, the caller cut it, nothing came for a while, or a bound was reached. */
  ended: Ended;
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
      const { text, truncated } = await readTextBounded(response.body, () => controller.abort(), READ_LIMITS.maxEventBytes).catch(() => ({
        text: '',
        truncated: false,
      }));
      let json: unknown;
      try {
        json = text && !truncated ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      const shown = evidence(request, `${head}\n\n${text.slice(0, EVIDENCE_LIMIT + 1)}`);
      if (truncated)
        throw new ProbeLimitExceeded(
          `${spec.method} ${spec.url.pathname}: the server sent a body larger than ${READ_LIMITS.maxEventBytes} bytes, which the probe and the client transport refuse`,
          shown,
        );
      return { status: response.status, headers: response.headers, json, events: [], ended: 'not-sse', evidence: shown };
    }
    const read = await readSseBounded(response.body as ReadableStream<Uint8Array>, () => controller.abort(), {
      cutWhen: spec.cutWhen,
      idleMs: spec.idleMs ?? 2000,
      rawLimit: EVIDENCE_LIMIT,
    });
    const shown = evidence(request, `${head}\n\n${read.raw}`);
    if (read.ended === 'limit')
      throw new ProbeLimitExceeded(
        `${spec.method} ${spec.url.pathname}: the server sent ${read.overflow ?? 'too much'}, past the bounds the probe and the client transport keep`,
        shown,
      );
    return { status: response.status, headers: response.headers, json: undefined, events: read.events, ended: read.ended, evidence: shown };
  } catch (error) {
    if (error instanceof ProbeLimitExceeded) throw error;
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

/** A response went past the probe's read bounds (the client transport's caps); reading stopped there. */
export class ProbeLimitExceeded extends Error {
  override name = 'ProbeLimitExceeded';
  constructor(
    message: string,
    /** The request and the response's first bytes. */
    readonly evidence: string,
  ) {
    super(message);
  }
}

/** The server could not be reached at all. */
export class ProbeUnreachable extends Error {
  override name = 'ProbeUnreachable';
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
export async function postWithHost(
  url: URL,
  host: string,
  body: unknown,
  timeoutMs: number,
  headers: Record<string, string> = {},
): Promise<{ status: number; evidence: string }> {
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
      const done = (): void =>
        resolve({ status: res.statusCode ?? 0, evidence: evidence(`POST ${url.pathname}\nhost: ${host}\n\n${text}`, `HTTP ${res.statusCode}\n\n${received}`) });
      res.on('end', done);
      res.on('close', done);
    });
    req.on('timeout', () => req.destroy(new ProbeTimeout(`POST ${url.href}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(text);
  });
}
