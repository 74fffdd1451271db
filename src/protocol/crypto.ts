/**
 * The core's only dependency on `node:crypto`: a synchronous SHA-256 for the event
 * hash chain (WebCrypto's digest is async, far too slow per event) and CSPRNG tokens.
 * `node:crypto` exists on Node, Deno, Bun and Workers with nodejs_compat.
 */
import { createHash, randomBytes } from 'node:crypto';

/** base64url(SHA-256(input)) truncated to `chars` characters. */
export function sha256b64url(input: string, chars: number): string {
  return createHash('sha256').update(input, 'utf8').digest('base64url').slice(0, chars);
}

/** base64url(SHA-256(first ‖ second)) truncated, hashing both parts without joining them. */
export function sha256b64urlOfPair(first: string, second: string, chars: number): string {
  return createHash('sha256').update(first, 'utf8').update(second, 'utf8').digest('base64url').slice(0, chars);
}

/** A CSPRNG token of `bytes` random bytes, base64url (visible ASCII, no padding). */
export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url');
}
