/**
 * Reads an SSE response body into events with eventsource-parser. Returns when the body
 * ends; rejects if the connection fails. Parser errors (an over-long line, say) are
 * reported, not swallowed.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseHandlers {
  onEvent(event: EventSourceMessage): void;
  onRetry?(ms: number): void;
}

export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers): Promise<void> {
  const parser = createParser({
    onEvent: (event) => handlers.onEvent(event),
    onRetry: (ms) => handlers.onRetry?.(ms),
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    reader.releaseLock();
  }
}
