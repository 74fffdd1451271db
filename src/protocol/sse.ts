/**
 * SSE encoding (WHATWG HTML §9.2 "Server-sent events").
 *
 * `id` and `event` may never contain CR, LF or NUL: a line break would end the field and
 * let the rest be read as another field; a NUL in `id` makes conforming parsers ignore
 * the field. Data is split on every line terminator (CRLF, CR, LF) into `data:` lines,
 * which a parser joins back with LF.
 */
import { ContinuityError } from './errors.js';

/** One SSE event to write. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  /** Reconnection time in milliseconds (`retry:` field). */
  retry?: number;
}

const FORBIDDEN = /[\r\n\0]/;
const LINE_BREAK = /\r\n|\r|\n/;

/** Encodes one event, ending with the blank line that dispatches it. */
export function encodeSseEvent(event: SseEvent): string {
  let out = '';
  if (event.event !== undefined) out += `event: ${checkField('event', event.event)}\n`;
  if (event.id !== undefined) out += `id: ${checkField('id', event.id)}\n`;
  if (event.retry !== undefined) out += `retry: ${checkRetry(event.retry)}\n`;
  const { data } = event;
  // [spec] a field value is the rest of the line; only line terminators need splitting.
  // JSON text never holds a raw CR or LF (they are escaped inside strings), so a JSON-RPC
  // payload is one line: two native scans instead of a regex split and a copy per line.
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${out}data: ${data}\n\n`;
  for (const line of data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/**
 * {@link encodeSseEvent} for an event whose `id` the event-ID codec made (visible ASCII by
 * construction, so the per-event field check is skipped) and whose `retry`, if any, is a
 * configured non-negative integer. `data` is still split on line breaks, so a payload
 * from a store can never inject a field.
 */
export function encodeSseLogEvent(id: string, data: string, retry: number | undefined): string {
  const head = retry === undefined ? `id: ${id}\n` : `id: ${id}\nretry: ${retry}\n`;
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${head}data: ${data}\n\n`;
  let out = head;
  for (const line of data.split(LINE_BREAK)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** A `retry:` directive on its own (no event is dispatched). */
export function encodeSseRetry(ms: number): string {
  return `retry: ${checkRetry(ms)}\n\n`;
}

/** A comment line, used as a keep-alive; parsers ignore it. */
export function encodeSseComment(text: string): string {
  return `: ${checkField('comment', text)}\n\n`;
}

function checkField(name: string, value: string): string {
  if (FORBIDDEN.test(value)) {
    throw new ContinuityError('sse-field-invalid', `SSE ${name} field contains CR, LF or NUL`, { field: name });
  }
  return value;
}

function checkRetry(ms: number): number {
  if (!Number.isSafeInteger(ms) || ms < 0) {
    throw new ContinuityError('sse-field-invalid', `SSE retry must be a non-negative integer, got ${ms}`, { field: 'retry' });
  }
  return ms;
}
