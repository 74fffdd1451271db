/** UTF-8 byte counting, shared by the stores (retention), the server (limits) and the chain hash. */

/**
 * The runtime's native UTF-8 length, where it has one (Node, Bun; Deno and Workers with
 * Node compatibility): it counts without encoding, an order of magnitude faster than a
 * loop over a large payload.
 */
const nativeByteLength: ((s: string, encoding: 'utf8') => number) | undefined = (
  globalThis as { Buffer?: { byteLength?: (s: string, encoding: 'utf8') => number } }
).Buffer?.byteLength;

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
