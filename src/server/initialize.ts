/** A POST carrying `initialize`: a new session, placed in this process, answered on its first stream. */
import { ContinuityError } from '../protocol/errors.js';
import { LATEST_PROTOCOL_VERSION, isSupportedProtocolVersion, type ProtocolVersion, VISIBLE_ASCII } from '../protocol/headers.js';
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import { randomToken } from '../protocol/crypto.js';
import type { SessionRecord } from '../store/types.js';
import type { Placement } from './cluster/placement.js';
import type { HandleContext, ServerFactory } from './session/context.js';

export interface Initializer {
  readonly placement: Placement;
  readonly server: ServerFactory;
  newSessionId(): string;
  now(): number;
  onError: (error: Error) => void;
}

/** Creates the session of `message` and answers it. */
export async function initializeSession(parts: Initializer, message: JsonRpcRequest, request: Request, context: HandleContext): Promise<Response> {
  const id = parts.newSessionId();
  if (!VISIBLE_ASCII.test(id) || id.length < 16) {
    throw new ContinuityError('internal-error', 'sessionId() must return visible ASCII of at least 16 characters');
  }
  const requested = message.params?.protocolVersion;
  // Keep the SDK inside the revisions this transport implements: one it would
  // otherwise pick (say, a stateless 2026 revision) is offered our latest instead.
  const version: ProtocolVersion = typeof requested === 'string' && isSupportedProtocolVersion(requested) ? requested : LATEST_PROTOCOL_VERSION;
  const init: JsonRpcRequest = requested === version ? message : { ...message, params: { ...message.params, protocolVersion: version } };
  const at = parts.now();
  const record: SessionRecord = {
    id,
    epoch: randomToken(12),
    pastEpochs: [],
    protocolVersion: version,
    initialize: JSON.stringify(init),
    principal: context.principal,
    createdAt: at,
    lastActiveAt: at,
  };
  const session = await parts.placement.create(record);
  try {
    await session.start(await parts.server(session.lasting.context(false)), init);
  } catch (error) {
    await session.terminate().catch(parts.onError);
    throw error;
  }
  return session.post([init], request, context, false);
}
