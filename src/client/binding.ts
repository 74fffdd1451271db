/**
 * What a checkpoint belongs to: the server endpoint it was taken from and, when the
 * application names one, the principal the client acted for. A checkpoint restored by a
 * transport for another URL or principal is refused (`checkpoint-mismatch`), never resumed
 * against a server that did not create its session. Pure: no I/O.
 */
import { sha256b64url } from '../protocol/crypto.js';
import type { SessionCheckpoint } from './checkpoint.js';

/** What a transport records in every checkpoint it saves, and requires of one it restores. */
export interface CheckpointBinding {
  /** The endpoint URL's origin and path (no query, no fragment, no credentials). */
  readonly server: string;
  /** A digest of the principal, when the application names one. */
  readonly principal?: string | undefined;
}

/** Longest `principal` option accepted. */
export const MAX_PRINCIPAL = 4096;

/** The binding of a transport for `url` acting for `principal`; a TypeError names a bad `principal`. */
export function checkpointBinding(url: URL, principal: string | undefined): CheckpointBinding {
  if (principal === undefined) return { server: serverOf(url) };
  if (typeof principal !== 'string' || principal.length === 0 || principal.length > MAX_PRINCIPAL) {
    throw new TypeError(`principal must be a non-empty string of at most ${MAX_PRINCIPAL} characters`);
  }
  // A digest: the checkpoint file need not reveal who the client acts for.
  return { server: serverOf(url), principal: sha256b64url(`mcp-continuity/principal\n${principal}`, 43) };
}

/** A URL's origin and path: what names an MCP endpoint (a query or fragment does not, and credentials must never reach the file). */
export function serverOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/**
 * Which binding field `checkpoint` contradicts, or undefined if none. A checkpoint written
 * before bindings were recorded (no `server`) is not checked: the session probe at restore
 * still finds out whether the server knows its session.
 */
export function bindingMismatch(checkpoint: SessionCheckpoint, binding: CheckpointBinding): 'server' | 'principal' | undefined {
  if (checkpoint.server === undefined) return undefined;
  if (checkpoint.server !== binding.server) return 'server';
  if ((checkpoint.principal ?? null) !== (binding.principal ?? null)) return 'principal';
  return undefined;
}
