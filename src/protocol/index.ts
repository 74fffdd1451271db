/** Pure protocol pieces: error table, event-ID codec, SSE encoding, headers, JSON-RPC shapes. */
export { ContinuityError, ERRORS, JsonRpcCode, isContinuityError, isErrorCode, type ErrorCode } from './errors.js';
export {
  CHAIN_LENGTH,
  MAX_EVENT_ID_LENGTH,
  chainSeed,
  eventIdPrefix,
  formatEventId,
  isEpoch,
  isStreamName,
  nextChain,
  parseEventId,
  tryParseEventId,
  tryParseEventIdIn,
  type EventId,
} from './event-id.js';
export { encodeSseComment, encodeSseEvent, encodeSseLogEvent, encodeSseRetry, type SseEvent } from './sse.js';
export {
  DEFAULT_MAX_FRAME_BYTES,
  Header,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  UPGRADE_ACCEPTED,
  UPGRADE_REQUEST_HEADER,
  UPGRADE_TOKEN_HEADER,
  WS_SUBPROTOCOL,
  accepts,
  allowsBatches,
  isSupportedProtocolVersion,
  supportsPolling,
  type ProtocolVersion,
} from './headers.js';
export {
  classify,
  errorResponse,
  isNotification,
  isRequest,
  isResponse,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcResult,
  type MessageKind,
  type RequestId,
} from './jsonrpc.js';
export { randomToken } from './crypto.js';
