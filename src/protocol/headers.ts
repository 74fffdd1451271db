/** Header names and protocol constants of the Streamable HTTP transport. */

export const Header = {
  SessionId: 'mcp-session-id',
  ProtocolVersion: 'mcp-protocol-version',
  LastEventId: 'last-event-id',
  /** Names the generation of the session's event log (docs/design.md, "Replay epoch"). */
  ReplayEpoch: 'x-mcp-replay-epoch',
  /** Sent by our client on every request: the last event IDs it holds (docs/design.md §2, "A store that went back"). */
  Seen: 'x-mcp-seen',
  Accept: 'accept',
  ContentType: 'content-type',
  ContentLength: 'content-length',
  Origin: 'origin',
  Host: 'host',
} as const;

/**
 * Visible ASCII (0x21-0x7E), one or more characters: what a session ID may be made of
 * (it travels in a header and names store keys, so no spaces or controls).
 */
export const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** Header a client sends on its standalone GET to ask for the WebSocket upgrade offer. */
export const UPGRADE_REQUEST_HEADER = 'x-mcp-upgrade';
/** Header carrying the offer's token on the WebSocket handshake. */
export const UPGRADE_TOKEN_HEADER = 'x-mcp-upgrade-token';
/** The notification that carries the upgrade offer on the standalone stream. */
export const UPGRADE_ACCEPTED = 'notifications/mcp-continuity/upgrade-accepted';
/** The WebSocket subprotocol of an upgraded session. */
export const WS_SUBPROTOCOL = 'mcp.v1';
/** The largest WebSocket frame accepted after an upgrade, by default (both sides). */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** Protocol revisions with stateful sessions and resumption, oldest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-03-26', '2025-06-18', '2025-11-25'] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export const LATEST_PROTOCOL_VERSION: ProtocolVersion = '2025-11-25';

export function isSupportedProtocolVersion(v: string): v is ProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}

/** 2025-03-26 is the only revision whose POST bodies may be JSON-RPC batches. */
export function allowsBatches(v: ProtocolVersion): boolean {
  return v === '2025-03-26';
}

/** SEP-1699 (2025-11-25): priming events and `retry:` before a server-side close. */
export function supportsPolling(v: ProtocolVersion): boolean {
  return v >= '2025-11-25';
}

/** Does an Accept header list `type` (or a matching wildcard)? */
export function accepts(header: string | null, type: string): boolean {
  if (header === null) return false;
  const [major] = type.split('/');
  for (const part of header.split(',')) {
    const [mediaPart, ...params] = part.split(';');
    const media = mediaPart?.trim().toLowerCase();
    // [RFC 9110 §12.4.2] q=0 means "not acceptable".
    if (params.some((p) => /^\s*q\s*=\s*0(\.0{0,3})?\s*$/i.test(p))) continue;
    if (media === type || media === '*/*' || media === `${major}/*`) return true;
  }
  return false;
}
