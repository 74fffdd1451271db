/** Rules every store applies the same way: retention options, byte counting, contiguity. */
import { ContinuityError } from '../protocol/errors.js';
import { resolvePositive } from '../protocol/options.js';
import { DEFAULT_RETENTION, type LogEvent, type ResolvedRetention, type RetentionOptions, type StreamHead } from './types.js';

/** `options` over the defaults; throws a RangeError naming the first one that is not a positive number. */
export function resolveRetention(options: RetentionOptions | undefined): ResolvedRetention {
  return resolvePositive('retention', DEFAULT_RETENTION, options);
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
