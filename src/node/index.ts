/** `mcp-continuity/node`: serve an endpoint on `node:http`. */
export { listen, nodeHandler, type ListenOptions, type Listener, type NodeHandlerOptions } from './listen.js';
export type { RequestIdentity } from './identity.js';
export { requestUrl, serveNode, toRequest, writeResponse } from './adapter.js';
export { DEFAULT_MAX_FRAME_BYTES, upgradeHandler, wsPort, type UpgradeHandlerOptions, type WebSocketLike } from './websocket.js';
