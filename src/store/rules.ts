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

/**
 * The runtime's native UTF-8 length, where it has one (Node, Bun; Deno and Workers with
 * Node compatibility): it counts without encoding, an order of magnitude faster than a
 * loop over a large payload.
 */
const nativeByteLength: ((s: string, encoding: 'utf8') => number) | undefined =
  (globalThis as { Buffer?: { byteLength?: (s: string, encoding: 'utf8') => number } }).Buffer?.byteLength;

/**
 * UTF-8 byte length without allocating. A lone surrogate counts 3 bytes: it is encoded
 * as U+FFFD, as every UTF-8 encoder here does.
 */
export function byteLength(s: string): number {
  return nativeByteLength !== undefined ? nativeByteLength(s, 'utf8') : countUtf8(s);
}

/** The portable count, for runtimes without a native one. */
export function countUtf8(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4; // a surrogate pair: one 4-byte code point
      i++;
    } else n += 3; // BMP, or a lone surrogate (encoded as U+FFFD, 3 bytes)
  }
  return n;
}

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
