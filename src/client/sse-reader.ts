/**
 * Reads an SSE response body into events with eventsource-parser. Returns when the body
 * ends; rejects if the connection fails, a handler throws, or an event grows past
 * `maxEventBytes` (then the body is cancelled: a hostile server's 300 MB line is never
 * buffered whole).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ContinuityError } from '../protocol/errors.js';

/** Default bound on one incoming event, bytes. */
export const DEFAULT_MAX_EVENT_BYTES = 16 * 1024 * 1024;

export interface SseHandlers {
  onEvent(event: EventSourceMessage): void;
  onRetry?(ms: number): void;
}

/**
 * `maxEventBytes` bounds what the parser buffers for one event (its unterminated line
 * plus its `data:` lines so far). The parser counts UTF-16 units of the decoded text,
 * never more than the UTF-8 bytes they came from, so the bound holds for bytes too.
 */
export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers, maxEventBytes = DEFAULT_MAX_EVENT_BYTES): Promise<void> {
  const parsed: EventSourceMessage[] = [];
  let tooLarge: ContinuityError | undefined;
  const parser = createParser({
    onEvent: (event) => parsed.push(event),
    onRetry: (ms) => handlers.onRetry?.(ms),
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') {
        tooLarge ??= new ContinuityError('inbound-event-too-large', `The server sent an SSE event larger than maxEventBytes (${maxEventBytes})`, {
          limit: maxEventBytes,
        });
      }
    },
    maxBufferSize: maxEventBytes,
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  let failed = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      // Handlers run after feed returns, so one that throws leaves the parser consistent.
      for (const event of parsed) handlers.onEvent(event);
      parsed.length = 0;
      if (tooLarge) throw tooLarge;
    }
    failed = false;
  } finally {
    // On failure the connection is dropped, not drained: its rest is never read.
    if (failed) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
