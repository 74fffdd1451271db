/** Rules every store applies the same way: retention options, byte counting, contiguity. */
import { ContinuityError } from '../protocol/errors.js';
import { DEFAULT_RETENTION, type LogEvent, type ResolvedRetention, type RetentionOptions, type StreamHead } from './types.js';

export function resolveRetention(options: RetentionOptions | undefined): ResolvedRetention {
  // An option given as `undefined` takes its default.
  const r: Record<string, unknown> = { ...DEFAULT_RETENTION };
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined) r[k] = v;
  for (const [k, v] of Object.entries(r)) {
    if (!(typeof v === 'number' && v > 0)) throw new RangeError(`retention.${k} must be a positive number, got ${String(v)}`);
  }
  return r as ResolvedRetention;
}

export { byteLength, countUtf8 } from '../protocol/utf8.js';

/** Throws `store-conflict` unless `events` continue `head` contiguously. Shared by stores. */
export function checkContiguous(head: StreamHead, events: readonly LogEvent[]): void {
  if (head.closed) throw new ContinuityError('store-conflict', 'Stream is closed');
  let expected = head.lastSeq + 1;
  for (const e of events) {
    if (e.seq !== expected) {
      throw new ContinuityError('store-conflict', `Expected seq ${expected}, got ${e.seq}`, { expected, got: e.seq });
    }
    expected++;
  }
}
