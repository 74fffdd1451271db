/**
 * Before a restored session is handed to the SDK `Client`, the server is asked whether it
 * still knows it (a `ping` on the session). Only then is the `Client`'s initialize answered
 * from the checkpoint; a session the server does not know (it restarted without its store,
 * or it is another server) is dropped, and the `Client`'s own initialize goes to the server,
 * so the version, capabilities and instructions it sees are the server's, never the file's.
 */
import { randomToken } from '../protocol/crypto.js';
import { ContinuityError } from '../protocol/errors.js';
import { Header } from '../protocol/headers.js';
import type { SessionCheckpoint } from './checkpoint.js';
import { postRetrying, type InitializeHost } from './initialize.js';
import { namesSession, refusalError } from './refusal.js';

/**
 * Does the server know the session of `checkpoint`? True on any 2xx answer to a `ping` on
 * it, false on a 404 (or a 400 naming the session). Network failures and 502/503/504 are
 * retried like a request (`maxRequestAttempts`); anything else rejects, as a failed
 * initialize would for a client without a checkpoint.
 */
export async function sessionKnown(host: InitializeHost, checkpoint: SessionCheckpoint, signal: AbortSignal): Promise<boolean> {
  // A string id of our own, random: it cannot collide with the SDK's numeric ids, nor with
  // the probe of an earlier process on the same session.
  const body = JSON.stringify({ jsonrpc: '2.0', id: `mcp-continuity/probe/${randomToken(9)}`, method: 'ping' });
  const headers = {
    [Header.Accept]: 'application/json, text/event-stream',
    [Header.ContentType]: 'application/json',
    [Header.SessionId]: checkpoint.sessionId,
    [Header.ProtocolVersion]: checkpoint.protocolVersion,
  };
  const { response, release } = await postRetrying(host, headers, body, signal).catch((error: unknown) => {
    throw signal.aborted ? error : new ContinuityError('server-unreachable', undefined, undefined, { cause: error });
  });
  try {
    if (response.ok) return true;
    const text = (await response.text()).slice(0, 4096);
    if (response.status === 404 || namesSession(response.status, text)) return false;
    throw refusalError(
      response.status,
      text,
      () =>
        new ContinuityError('response-invalid', `Checking the restored session failed: HTTP ${response.status} ${text.slice(0, 200)}`, {
          status: response.status,
        }),
    );
  } finally {
    // The answer to the ping itself is of no interest.
    await response.body?.cancel().catch(() => undefined);
    release();
  }
}
