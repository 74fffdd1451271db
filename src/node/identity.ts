/** Who sent a request: the principal and auth info a host derives from it. */
import type { IncomingMessage } from 'node:http';
import type { HandleContext } from '../server/index.js';

/** Who sent a request, for binding sessions to principals. */
export interface RequestIdentity {
  /**
   * Derives the authenticated principal from the request (say, from a verified token).
   * A session created under a principal is bound to it: the same session ID presented
   * under another principal, or under none, is answered exactly like an unknown session
   * (404). Return `undefined` for an anonymous request. A throw answers 500.
   */
  principal?: ((req: IncomingMessage) => string | undefined | Promise<string | undefined>) | undefined;
  /** Authentication info passed to the SDK server's handlers as `extra.authInfo`. */
  authInfo?: ((req: IncomingMessage) => unknown) | undefined;
}

/** The per-request context that `identity` derives. */
export function contextOf(identity: RequestIdentity): ((req: IncomingMessage) => Promise<HandleContext>) | undefined {
  const { principal, authInfo } = identity;
  if (!principal && !authInfo) return undefined;
  return async (req) => {
    const context: HandleContext = {};
    if (principal) {
      const p = await principal(req);
      if (p !== undefined) context.principal = p;
    }
    if (authInfo) context.authInfo = authInfo(req);
    return context;
  };
}
