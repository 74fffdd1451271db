/** `mcp-continuity/node`: serve an endpoint on `node:http`. */
export { listen, nodeHandler, type ListenOptions, type Listener } from './listen.js';
export { toRequest, writeResponse } from './adapter.js';
export { upgradeHandler, wsPort } from './websocket.js';
