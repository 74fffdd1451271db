/**
 * The probe's bounded readers: an SSE body event by event, and a JSON body, each with the
 * client transport's caps, so no server (an endless `data:` line, endless small events, a
 * huge JSON answer) can make the probe hold more than a few tens of megabytes.
 */
import { createParser } from 'eventsource-parser';
import { DEFAULT_MAX_EVENT_BYTES } from '../../client/sse-reader.js';

/** One SSE event as received. */
export interface SseEvent {
  id: string | undefined;
  event: string | undefined;
  data: string;
  /** `retry:` seen since the previous event. */
  retry: number | undefined;
}

/** How much of one response the probe keeps. */
export interface ReadLimits {
  /** Largest single event (or JSON body), bytes: the client transport's cap. */
  maxEventBytes: number;
  /** Events kept per response; reading stops past it. */
  maxEvents: number;
  /** Bytes of event data kept per response; reading stops past it. */
  maxTotalBytes: number;
}

/** The defaults: 16 MiB per event as in the client, 20,000 events or 32 MiB per response. */
export const READ_LIMITS: ReadLimits = { maxEventBytes: DEFAULT_MAX_EVENT_BYTES, maxEvents: 20_000, maxTotalBytes: 32 * 1024 * 1024 };

/** Why reading stopped. `limit`: a bound of {@link ReadLimits} was reached (see `overflow`). */
export type Ended = 'end' | 'cut' | 'idle' | 'not-sse' | 'limit';

/** What a bounded read kept. */
export interface ReadOutcome {
  events: SseEvent[];
  ended: Ended;
  /** The response's first bytes, for the evidence. */
  raw: string;
  /** Which bound stopped the read, in words. */
  overflow?: string | undefined;
}

/** Options of {@link readSseBounded}. */
export interface ReadSpec {
  cutWhen?: ((events: SseEvent[]) => boolean) | undefined;
  idleMs: number;
  rawLimit: number;
  limits?: ReadLimits | undefined;
}

/** Reads SSE from `body` until it ends, `cutWhen` holds, it idles, or a bound is reached. */
export async function readSseBounded(body: ReadableStream<Uint8Array>, abort: () => void, spec: ReadSpec): Promise<ReadOutcome> {
  const limits = spec.limits ?? READ_LIMITS;
  const events: SseEvent[] = [];
  let retry: number | undefined;
  let raw = '';
  let kept = 0;
  let overflow: string | undefined;
  const parser = createParser({
    onEvent: (e) => {
      if (overflow !== undefined) return;
      kept += e.data.length;
      if (events.length >= limits.maxEvents) overflow = `more than ${limits.maxEvents} events on one response`;
      else if (kept > limits.maxTotalBytes) overflow = `more than ${limits.maxTotalBytes} bytes of events on one response`;
      else events.push({ id: e.id, event: e.event, data: e.data, retry });
      retry = undefined;
    },
    onRetry: (ms) => {
      retry = ms;
    },
    onError: (error) => {
      if (error.type === 'max-buffer-size-exceeded') overflow ??= `an event larger than ${limits.maxEventBytes} bytes`;
    },
    maxBufferSize: limits.maxEventBytes,
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const rawDecoder = new TextDecoder();
  // A line without its end is held here as the bytes that came, not fed nor decoded: the
  // parser would join and rescan its whole unfinished line on every chunk, and decoded
  // copies would double what an endless line costs.
  let held: Uint8Array[] = [];
  let heldBytes = 0;
  const stop = async (ended: Ended): Promise<ReadOutcome> => {
    abort();
    await reader.cancel().catch(() => undefined);
    return { events, ended, raw, overflow };
  };
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = new Promise<'idle'>((resolve) => {
      timer = setTimeout(() => resolve('idle'), spec.idleMs);
    });
    const next = await Promise.race([reader.read(), idle]).finally(() => clearTimeout(timer));
    if (next === 'idle') return stop('idle');
    if (next.done) return { events, ended: 'end', raw };
    const chunk = next.value;
    if (raw.length < spec.rawLimit) raw += rawDecoder.decode(chunk.subarray(0, spec.rawLimit - raw.length + 1), { stream: true });
    if (chunk.indexOf(10) < 0 && chunk.indexOf(13) < 0) {
      held.push(chunk);
      heldBytes += chunk.byteLength;
      if (heldBytes > limits.maxEventBytes) overflow = `an event larger than ${limits.maxEventBytes} bytes`;
    } else {
      let text = '';
      for (const piece of held) text += decoder.decode(piece, { stream: true });
      parser.feed(text + decoder.decode(chunk, { stream: true }));
      held = [];
      heldBytes = 0;
    }
    if (overflow !== undefined) return stop('limit');
    if (spec.cutWhen?.(events)) return stop('cut');
  }
}

/** Reads a non-SSE body as text, at most `maxBytes`; `truncated` when it was longer. */
export async function readTextBounded(
  body: ReadableStream<Uint8Array> | null,
  abort: () => void,
  maxBytes: number,
): Promise<{ text: string; truncated: boolean }> {
  if (body === null) return { text: '', truncated: false };
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let bytes = 0;
  for (;;) {
    const next = await reader.read();
    if (next.done) return { text: text + decoder.decode(), truncated: false };
    bytes += next.value.byteLength;
    if (bytes > maxBytes) {
      abort();
      await reader.cancel().catch(() => undefined);
      return { text, truncated: true };
    }
    text += decoder.decode(next.value, { stream: true });
  }
}
