/**
 * Telling a CORS refusal from a lost connection. A browser reports both as the same
 * `TypeError` and hides which it was; a `no-cors` request is exempt from the CORS check,
 * so if one reaches the server, the server is up and the browser refused the real request.
 */
import { ContinuityError } from '../protocol/errors.js';

/** The origin of the page this runs in, or undefined outside a browser (Node, Workers). */
function pageOrigin(): string | undefined {
  const origin = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof origin === 'string' && origin !== 'null' ? origin : undefined;
}

/** Does this run in a page of another origin than `url` (so each custom header needs the server's CORS consent)? */
export function crossOriginPage(url: URL): boolean {
  const origin = pageOrigin();
  return origin !== undefined && origin !== url.origin;
}

/**
 * `cors-refused` when `error` (a failed fetch of `url`) was the browser's CORS check, else
 * undefined. Only in a page, for a cross-origin `url`, after a `TypeError`; it then costs
 * one `HEAD` request with `mode: 'no-cors'`.
 */
export async function corsRefusal(url: URL, error: unknown, fetcher: (url: URL, init: RequestInit) => Promise<Response>): Promise<ContinuityError | undefined> {
  const origin = pageOrigin();
  if (!(error instanceof TypeError) || origin === undefined || origin === url.origin) return undefined;
  try {
    await fetcher(url, { method: 'HEAD', mode: 'no-cors', cache: 'no-store', credentials: 'omit' });
  } catch {
    return undefined; // unreachable without CORS too: the connection failed
  }
  return new ContinuityError(
    'cors-refused',
    `The browser refused the request from ${origin} to ${url.origin}: allow this origin, the methods POST, GET and DELETE, and the MCP headers in the server's CORS settings`,
    { origin, target: url.origin },
    { cause: error },
  );
}
