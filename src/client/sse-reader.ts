/**
 * Reads an SSE response body into events with eventsource-parser. Returns when the body
 * ends; rejects if the connection fails or a handler throws.
 *
 * Events are handed over one at a time with a microtask between them, even when one
 * network read carries many: the SDK runs notification handlers a microtask late but
 * settles responses at once, so a progress notification delivered in the same tick as
 * its request's result would find its handler already gone.
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
      for (let i = 0; i < parsed.length; i++) {
        if (i > 0) await null;
        handlers.onEvent(parsed[i] as EventSourceMessage);
      }
      parsed.length = 0;
    }
  } finally {
    reader.releaseLock();
  }
}
