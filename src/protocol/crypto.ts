/**
 * The core's hashing and random tokens: a synchronous SHA-256 for the event hash chain
 * (WebCrypto's digest is async, far too slow per event) and CSPRNG tokens.
 *
 * Two implementations give identical results, chosen by package.json `imports` (`#crypto`):
 * `node:crypto` where the `node` condition holds (Node, Bun, Deno), and a pure-JS SHA-256
 * with WebCrypto's `getRandomValues` elsewhere (browsers, Workers), so a browser bundle
 * needs no `node:` module. Changing the algorithm means changing both, and the test that
 * compares them (test/unit/crypto.test.ts).
 */
export { sha256b64url, sha256b64urlOfPair, sha256b64urlOfBytes, randomToken } from '#crypto';

/** What each implementation provides. */
export interface Crypto {
  /** base64url(SHA-256(UTF-8 of `input`)) truncated to `chars` characters. */
  sha256b64url(input: string, chars: number): string;
  /** base64url(SHA-256(UTF-8 of `first ‖ second`)) truncated to `chars` characters. */
  sha256b64urlOfPair(first: string, second: string, chars: number): string;
  /** base64url(SHA-256(`bytes`)) truncated to `chars` characters. */
  sha256b64urlOfBytes(bytes: Uint8Array, chars: number): string;
  /** A CSPRNG token of `bytes` random bytes, base64url (visible ASCII, no padding). */
  randomToken(bytes: number): string;
}
