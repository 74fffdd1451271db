/**
 * Re-initialization: a new session with the same client info and capabilities as the
 * SDK's own initialize, done by the transport itself so the SDK `Client` keeps working
 * without knowing. Retries transient failures (network, 502/503/504) with backoff.
 */
import { ContinuityError } from '../protocol/errors.js';
import { Header } from '../protocol/headers.js';
import type { JsonRpcMessage, JsonRpcRequest } from '../protocol/jsonrpc.js';
import { linkSignal } from './abort.js';
import { reconnectDelay, type ResolvedReconnect } from './backoff.js';
import { readSse } from './sse-reader.js';

export interface InitializedSession {
  /** Undefined for a server without sessions (stateless). */
  sessionId: string | undefined;
  epoch: string | null;
  protocolVersion: string;
  /** The server's initialize result. */
  result: Record<string, unknown>;
}

export interface InitializeHost {
  readonly url: URL;
  readonly reconnect: ResolvedReconnect;
  readonly maxEventBytes: number;
  fetch(url: URL, init: RequestInit): Promise<Response>;
  /** Headers without a session (it was forgotten before this is called). */
  headers(extra: Record<string, string>): Headers;
}

let counter = 0;

export async function initializeSession(host: InitializeHost, init: JsonRpcRequest | undefined, signal: AbortSignal): Promise<InitializedSession> {
  if (!init) throw new ContinuityError('reinitialize-failed', 'Cannot re-initialize: the initialize request of this session is unknown');
  // A string id of our own can never collide with the SDK's numeric request ids.
  const request: JsonRpcRequest = { ...init, id: `mcp-continuity/reinitialize/${++counter}` };
  const json = { [Header.Accept]: 'application/json, text/event-stream', [Header.ContentType]: 'application/json' };
  const { response, release } = await postRetrying(host, json, JSON.stringify(request), signal);
  if (!response.ok) {
    release();
    throw new ContinuityError('reinitialize-failed', `Re-initialize failed: HTTP ${response.status} ${(await response.text()).slice(0, 200)}`, {
      status: response.status,
    });
  }
  const sessionId = response.headers.get(Header.SessionId) ?? undefined;
  const epoch = response.headers.get(Header.ReplayEpoch);
  const answer = await readAnswer(response, request.id as string, host.maxEventBytes).finally(release);
  if (!('result' in answer)) throw new ContinuityError('reinitialize-failed', `Re-initialize refused: ${JSON.stringify(answer).slice(0, 200)}`);
  const protocolVersion = String(answer.result.protocolVersion);
  const headers = host.headers({ [Header.ContentType]: 'application/json', [Header.Accept]: 'application/json, text/event-stream' });
  if (sessionId !== undefined) headers.set(Header.SessionId, sessionId);
  headers.set(Header.ProtocolVersion, protocolVersion);
  const ackLink = linkSignal(signal);
  try {
    const ack = await host.fetch(host.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      signal: ackLink.signal,
    });
    await ack.body?.cancel();
  } finally {
    ackLink.release();
  }
  return { sessionId, epoch, protocolVersion, result: answer.result };
}

/**
 * POSTs `body` (with `headers` added to the host's), retrying network failures and
 * 502/503/504 with backoff up to `maxRequestAttempts`; then the last answer, whatever its
 * status, with the release of its abort link (once its body is read), or the last error.
 */
export async function postRetrying(
  host: InitializeHost,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<{ response: Response; release: () => void }> {
  for (let attempt = 0; ; attempt++) {
    const link = linkSignal(signal);
    let response: Response;
    try {
      response = await host.fetch(host.url, { method: 'POST', headers: host.headers(headers), body, signal: link.signal });
    } catch (error) {
      link.release();
      if (signal.aborted || attempt + 1 >= host.reconnect.maxRequestAttempts) throw error;
      await delay(reconnectDelay(host.reconnect, attempt, undefined));
      continue;
    }
    if ([502, 503, 504].includes(response.status) && attempt + 1 < host.reconnect.maxRequestAttempts) {
      link.release();
      await response.body?.cancel();
      await delay(reconnectDelay(host.reconnect, attempt, undefined));
      continue;
    }
    return { response, release: link.release };
  }
}

/** The response to `id`, from a JSON body or an SSE stream. */
async function readAnswer(
  response: Response,
  id: string,
  maxEventBytes: number,
): Promise<JsonRpcMessage & ({ result: Record<string, unknown> } | { error: unknown })> {
  const type = response.headers.get(Header.ContentType) ?? '';
  const isAnswer = (m: JsonRpcMessage): boolean => !('method' in m) && 'id' in m && m.id === id;
  if (type.includes('application/json')) {
    const body = (await response.json()) as JsonRpcMessage | JsonRpcMessage[];
    const found = (Array.isArray(body) ? body : [body]).find(isAnswer);
    if (found) return found as never;
  } else if (response.body) {
    let found: JsonRpcMessage | undefined;
    const controller = new AbortController();
    await readSse(
      response.body.pipeThrough(new TransformStream(), { signal: controller.signal }),
      {
        onEvent: (e) => {
          if (found || e.data === '') return;
          const m = JSON.parse(e.data) as JsonRpcMessage;
          if (isAnswer(m)) {
            found = m;
            controller.abort();
          }
        },
      },
      maxEventBytes,
    ).catch(() => {});
    if (found) return found as never;
  }
  throw new ContinuityError('stream-lost', 'The initialize response never arrived');
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
