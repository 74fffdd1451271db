/** A body a framework's parser already read, back to the text the endpoint validates. */

/**
 * The text of a parsed body: a string or bytes as they are, anything else (the object
 * a JSON parser built) as JSON. `undefined` when there is no parsed body.
 */
export function parsedBodyText(body: unknown): string | undefined {
  if (body === undefined) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return new TextDecoder().decode(body);
  return JSON.stringify(body);
}

/** Authentication info as the official SDK's `requireBearerAuth` leaves it on `req.auth`. */
export interface AuthInfoLike {
  readonly clientId: string;
  readonly token?: string | undefined;
  readonly scopes?: readonly string[] | undefined;
  readonly extra?: Readonly<Record<string, unknown>> | undefined;
}

/**
 * The default principal of a request authenticated the SDK's way: the token's client ID,
 * refined by `extra.sub` when the token verifier reports a subject (one client may act
 * for many users, and a session must not pass between them).
 *
 * Always a JSON array (`["app"]`, `["app","alice"]`): one client ID alone is never spelled
 * like a pair, so a client ID that is itself the text `["app","alice"]` becomes
 * `["[\"app\",\"alice\"]"]` and cannot reach the session of client `app` and subject `alice`.
 */
export function principalOfAuth(auth: AuthInfoLike | undefined): string | undefined {
  if (!auth || typeof auth.clientId !== 'string') return undefined;
  const sub = auth.extra?.sub;
  return JSON.stringify(typeof sub === 'string' ? [auth.clientId, sub] : [auth.clientId]);
}
