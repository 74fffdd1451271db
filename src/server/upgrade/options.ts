/** Options of the SSE→WebSocket upgrade. */
export interface UpgradeOptions {
  /** Offer the upgrade to clients that ask for it (`X-MCP-Upgrade: websocket` on the GET stream). */
  websocket: boolean;
  /** How long an offer stays valid, ms (default 10,000); then the session is superseded. */
  expiresInMs?: number | undefined;
  /** Offers pending at once in this process (default 100); beyond it no offer is made. */
  maxPending?: number | undefined;
}
