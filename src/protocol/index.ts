/** Pure protocol pieces: error table, event-ID codec, SSE encoding, headers, JSON-RPC shapes. */
export * from './errors.js';
export * from './event-id.js';
export * from './sse.js';
export * from './headers.js';
export * from './jsonrpc.js';
export { randomToken } from './crypto.js';
