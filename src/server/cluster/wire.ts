/**
 * The text of the messages replicas exchange over the store's bus. Two rules hold here,
 * at the last step before the bus, whoever builds the message:
 *
 * - what the owner hands the tool has the shape it would have had on the replica the
 *   request reached: `authInfo` travels as tagged JSON (a `URL` stays a `URL`, a `Date` a
 *   `Date`);
 * - raw credentials never go on the bus (pub/sub is readable by anyone with access to
 *   Redis, and `MONITOR` shows it): the credential headers are left out, and so are
 *   user and password in the URL. The principal was checked on the replica reached and is
 *   bound to the session already; the owner needs no credential to run the request.
 */
import { decodeTagged, encodeTagged } from '../../protocol/tagged-json.js';
import type { ErrorCode } from '../../protocol/errors.js';
import type { JsonRpcMessage } from '../../protocol/jsonrpc.js';
import type { Accepted } from '../session/post.js';

/** A message carried to the owner of a session. */
export type Carried =
  | { t: 'post'; session: string; messages: JsonRpcMessage[]; batch: boolean; url: string; headers: Record<string, string>; authInfo?: unknown }
  | { t: 'delete'; session: string }
  /** A GET served on another replica: the owner's upgrade gate decides, and a standalone reader gets its priming event. */
  | { t: 'open'; session: string; input: 'resume' | 'standalone' };

/** The owner's answer. `after`: for an `open` standalone reader, the seq its priming event follows. */
export type CarriedReply =
  { ok: true; accepted: Accepted; after?: number | undefined } | { ok: false; code: ErrorCode; message: string; detail?: Record<string, unknown> | undefined };

/**
 * What became of a carried message: the owner's reply; `undelivered` (nobody listened:
 * it certainly did not run); or `unknown` (delivered, and its receiver stopped answering
 * and lost its lease: it may have run, and must not be run again).
 */
export type CallOutcome = { t: 'reply'; reply: CarriedReply } | { t: 'undelivered' } | { t: 'unknown' };

/** Request headers that carry credentials, never carried to the owner. */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** A message between replicas. */
export type Envelope = { t: 'call'; id: string; from: string; body: Carried } | { t: 'reply'; id: string; body: CarriedReply };

/** On the wire, a carried POST's `authInfo` is tagged JSON text in `auth`. */
type WirePost = Omit<Extract<Carried, { t: 'post' }>, 'authInfo'> & { auth?: string };

/** The envelope as bus text, without credentials. */
export function encodeEnvelope(envelope: Envelope): string {
  if (envelope.t !== 'call' || envelope.body.t !== 'post') return JSON.stringify(envelope);
  const { authInfo, headers, url, ...rest } = envelope.body;
  const body: WirePost = { ...rest, url: withoutUserinfo(url), headers: withoutCredentials(headers) };
  if (authInfo !== undefined) body.auth = encodeTagged(authInfo);
  return JSON.stringify({ ...envelope, body });
}

/** An envelope read from the bus; undefined for text that is not one (nothing on the bus may end the process). */
export function decodeEnvelope(raw: string): Envelope | undefined {
  try {
    const envelope = JSON.parse(raw) as Envelope;
    if (envelope.t !== 'call' || envelope.body.t !== 'post') return envelope;
    const { auth, ...rest } = envelope.body as WirePost;
    const body: Carried = rest;
    if (auth !== undefined) body.authInfo = decodeTagged(auth);
    return { ...envelope, body };
  } catch {
    return undefined;
  }
}

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!CREDENTIAL_HEADERS.has(k.toLowerCase())) out[k] = v;
  return out;
}

function withoutUserinfo(url: string): string {
  if (!url.includes('@')) return url;
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return url;
  }
}
