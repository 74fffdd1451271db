/** The HTTP response to a POST, from what the session made of its messages. */
import { ContinuityError } from '../../protocol/errors.js';
import { Header } from '../../protocol/headers.js';
import { sseHeaders } from '../stream/http.js';
import type { OutboundStream } from '../stream/outbound-stream.js';
import { SseSink } from '../stream/sse-sink.js';
import type { ReaderBounds } from '../stream/bounded-writer.js';

/** What became of the messages of one POST. */
export type Accepted = { kind: 'accepted' } | { kind: 'stream'; stream: string } | { kind: 'json'; body: string };

/** Did a write fail because another replica took the session over? */
export function isFenced(error: unknown): boolean {
  return error instanceof ContinuityError && error.code === 'store-fenced';
}

/**
 * Runs `accept` with a reader attached to the request stream it opens (202 when there is
 * none, the JSON answer in JSON mode).
 */
export async function postResponse(
  session: { readonly sessionId: string; readonly epoch: string },
  bounds: ReaderBounds,
  keepAliveMs: number,
  accept: (attach: (stream: OutboundStream) => void) => Promise<Accepted>,
): Promise<Response> {
  let sink: SseSink | undefined;
  const accepted = await accept((stream) => {
    sink = new SseSink({ ...bounds, keepAliveMs });
    void stream.attach(sink, 0);
  });
  if (accepted.kind === 'accepted') return new Response(null, { status: 202 });
  if (accepted.kind === 'stream' && sink) return new Response(sink.body, { status: 200, headers: sseHeaders(session.sessionId, session.epoch) });
  return new Response(accepted.kind === 'json' ? accepted.body : null, { status: 200, headers: jsonHeaders(session.sessionId, session.epoch) });
}

/** Headers of a JSON answer to a POST. */
export function jsonHeaders(sessionId: string, epoch: string): Record<string, string> {
  return { [Header.ContentType]: 'application/json', [Header.SessionId]: sessionId, [Header.ReplayEpoch]: epoch };
}
