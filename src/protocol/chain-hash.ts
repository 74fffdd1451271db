/**
 * {@link nextChain} for a hot path (the server chaining each event it sends, the client
 * checking each event it reads): the same value, but
 * `previous ‖ NUL ‖ payload` is encoded into one reused buffer and hashed there, instead of
 * being joined into a new string that the hash then flattens, measures and encodes to
 * UTF-8 again (at 4 KiB the joined string costs about a third more on Node 20).
 */
import { sha256b64urlOfBytes } from './crypto.js';
import { CHAIN_LENGTH, nextChain } from './event-id.js';
import { byteLength } from './utf8.js';

/**
 * Below this many UTF-16 units the joined string is cheaper: it is hashed from a stack
 * buffer, and encoding into the reused one costs more in calls than it saves in copies
 * (the two cross between 300 and 700 units on Node 20).
 */
const MIN_PAYLOAD = 512;
/**
 * Payloads whose UTF-8 (plus the previous value) fits are hashed in the buffer; larger
 * ones take {@link nextChain}, which hashes them in place without the join.
 */
const SCRATCH_BYTES = 256 * 1024;
/** Previous values longer than this (an integer stream's ID, say) take {@link nextChain}. */
const MAX_PREVIOUS = 128;

const encoder = new TextEncoder();
/** Where a payload's UTF-8 starts in the scratch buffer: the previous value and NUL go just before it. */
const HEAD = MAX_PREVIOUS + 1;
// One buffer for the process: it is filled and hashed synchronously, never held across a turn.
let scratch: Uint8Array | undefined;
let tail: Uint8Array | undefined;
/** The payload whose UTF-8 the scratch holds at {@link HEAD}, and its length in bytes. */
let encoded: string | undefined;
let encodedBytes = 0;

/** Encodes `payload` at {@link HEAD}; its byte length, or -1 if its UTF-8 does not fit. */
function encode(payload: string): number {
  if (encoded === payload) return encodedBytes;
  scratch ??= new Uint8Array(HEAD + SCRATCH_BYTES);
  tail ??= scratch.subarray(HEAD);
  const { read, written } = encoder.encodeInto(payload, tail);
  // `read` short of the payload: its UTF-8 did not fit (up to 3 bytes per UTF-16 unit).
  if (read !== payload.length) {
    encoded = undefined;
    return -1;
  }
  encoded = payload;
  encodedBytes = written;
  return written;
}

function hashable(payload: string): boolean {
  return payload.length >= MIN_PAYLOAD && payload.length <= SCRATCH_BYTES;
}

/**
 * The UTF-8 byte length of `payload`. A payload that {@link hashNextChain} would encode is
 * encoded here already, and the hash that follows reuses it: a sender counts and hashes
 * each event, and this way it is encoded once for both.
 */
export function utf8Length(payload: string): number {
  if (hashable(payload)) {
    const bytes = encode(payload);
    if (bytes >= 0) return bytes;
  }
  return byteLength(payload);
}

/**
 * The UTF-8 of `payload` if the scratch buffer holds it (it was the last payload counted or
 * hashed), else `undefined`. A view of the scratch: copy it before the turn ends and before
 * the next count or hash. A store that keeps payloads as UTF-8 copies the bytes from here
 * instead of encoding the payload a second time (at 64 KiB a copy costs a fraction of an
 * encode).
 */
export function encodedUtf8(payload: string): Uint8Array | undefined {
  // The same string object is the usual case (a pointer compare); two equal strings have equal bytes anyway.
  if (encoded !== payload) return undefined;
  return (tail as Uint8Array).subarray(0, encodedBytes);
}

/** `nextChain(previous, payload)`, computed without building the joined string. */
export function hashNextChain(previous: string, payload: string): string {
  if (!hashable(payload) || previous.length > MAX_PREVIOUS) return nextChain(previous, payload);
  const bytes = encode(payload);
  if (bytes < 0) return nextChain(previous, payload);
  const buffer = scratch as Uint8Array;
  // The previous value is a chain or an event ID: ASCII, copied as is. Anything else: the string path.
  const start = HEAD - previous.length - 1;
  for (let i = 0; i < previous.length; i++) {
    const unit = previous.charCodeAt(i);
    if (unit > 0x7f) return nextChain(previous, payload);
    buffer[start + i] = unit;
  }
  buffer[HEAD - 1] = 0;
  return sha256b64urlOfBytes(new Uint8Array(buffer.buffer, buffer.byteOffset + start, HEAD - start + bytes), CHAIN_LENGTH);
}
