/**
 * `Crypto` (src/protocol/crypto.ts) without `node:` modules, for browsers and Workers
 * (package.json `imports`, `#crypto` by default): SHA-256 from ./sha256.ts (pure JS,
 * synchronous) and tokens from WebCrypto's `getRandomValues`. Same digests as
 * `crypto-node.ts`.
 */
import { sha256 } from './sha256.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const encoder = new TextEncoder();

/** base64url of `bytes`, no padding, only as many characters as `chars` needs. */
function base64url(bytes: Uint8Array, chars: number): string {
  let out = '';
  for (let i = 0; i < bytes.length && out.length < chars; i += 3) {
    const a = bytes[i] as number;
    const b = bytes[i + 1];
    const c = bytes[i + 2];
    out += (ALPHABET[a >> 2] as string) + (ALPHABET[((a & 3) << 4) | ((b ?? 0) >> 4)] as string);
    if (b !== undefined) out += ALPHABET[((b & 15) << 2) | ((c ?? 0) >> 6)] as string;
    if (c !== undefined) out += ALPHABET[c & 63] as string;
  }
  return out.slice(0, chars);
}

/** base64url(SHA-256(UTF-8 of `input`)) truncated to `chars` characters. */
export function sha256b64url(input: string, chars: number): string {
  return base64url(sha256(encoder.encode(input)), chars);
}

/** base64url(SHA-256(UTF-8 of `first ‖ second`)) truncated to `chars` characters. */
export function sha256b64urlOfPair(first: string, second: string, chars: number): string {
  // Joined before encoding: a surrogate pair split across the two is one character.
  return base64url(sha256(encoder.encode(first + second)), chars);
}

/** base64url(SHA-256(`bytes`)) truncated to `chars` characters. */
export function sha256b64urlOfBytes(bytes: Uint8Array, chars: number): string {
  return base64url(sha256(bytes), chars);
}

/** A CSPRNG token of `bytes` random bytes, base64url (visible ASCII, no padding). */
export function randomToken(bytes: number): string {
  const random = new Uint8Array(bytes);
  globalThis.crypto.getRandomValues(random);
  return base64url(random, Math.ceil((bytes * 4) / 3));
}
