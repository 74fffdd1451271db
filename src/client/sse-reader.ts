/**
 * Reads an SSE response body into events with eventsource-parser. Returns when the body
 * ends; rejects if the connection fails or a handler throws.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface SseHandlers {
  onEvent(event: EventSourceMessage): void;
  onRetry?(ms: number): void;
}

export async function readSse(body: ReadableStream<Uint8Array>, handlers: SseHandlers): Promise<void> {
  const parsed: EventSourceMessage[] = [];
  const parser = createParser({
    onEvent: (event) => parsed.push(event),
    onRetry: (ms) => handlers.onRetry?.(ms),
  });
  const decoder = new TextDecoder();
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      // Handlers run after feed returns, so one that throws leaves the parser consistent.
      for (const event of parsed) handlers.onEvent(event);
      parsed.length = 0;
    }
  } finally {
    reader.releaseLock();
  }
}
