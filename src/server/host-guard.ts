/**
 * Host and Origin validation against DNS rebinding ([spec] transports, "Security
 * Warning": servers MUST validate Origin; local servers SHOULD bind to localhost).
 * A rebinding attack reaches a loopback server with the attacker's host name in `Host`
 * and the attacker's page in `Origin`; checking both closes it.
 */
import { ContinuityError } from '../protocol/errors.js';

/** Which hosts and origins to accept. Entries are compared case-insensitively. */
export interface HostGuardOptions {
  /**
   * Accepted `Host` values: `name:port` matches exactly, a bare `name` matches that name on
   * any port (a proxy or port-forward in front of a loopback server). Omitted: any host.
   */
  allowedHosts?: string[] | undefined;
  /** Accepted `Origin` values (`http://localhost:3000`). Omitted: any origin. Requests without Origin always pass. */
  allowedOrigins?: string[] | undefined;
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'];

/** Is `host` (a bind address, any spelling) a loopback address? */
export function isLoopbackHost(host: string): boolean {
  let h = host.toLowerCase();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h.startsWith('::ffff:')) h = h.slice('::ffff:'.length); // IPv4-mapped IPv6
  if (/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h)) return true;
  // ::1 in any of its spellings (0:0:0:0:0:0:0:1, 0::1, …)
  return /^[0:]*:0*1$/.test(h) && h.includes(':');
}

/**
 * The guard for a server bound to loopback on `port`: loopback names (and the bind
 * address itself, e.g. 127.0.0.2) only, http and https.
 */
export function loopbackGuard(port: number, bindHost?: string): HostGuardOptions {
  const names = new Set(LOOPBACK_NAMES);
  if (bindHost !== undefined) names.add(bindHost.includes(':') && !bindHost.startsWith('[') ? `[${bindHost}]` : bindHost);
  const hosts = [...names].map((n) => `${n}:${port}`);
  return {
    allowedHosts: hosts,
    allowedOrigins: hosts.flatMap((h) => [`http://${h}`, `https://${h}`]),
  };
}

/**
 * `guard` that also accepts `hosts` (`name` or `name:port`) in `Host`, and their
 * `http`/`https` origins in `Origin`: what a server behind a proxy or port-forward needs.
 */
export function allowHosts(guard: HostGuardOptions, hosts: readonly string[]): HostGuardOptions {
  if (hosts.length === 0) return guard;
  const out: HostGuardOptions = {};
  if (guard.allowedHosts) out.allowedHosts = [...guard.allowedHosts, ...hosts];
  if (guard.allowedOrigins) out.allowedOrigins = [...guard.allowedOrigins, ...hosts.flatMap((h) => [`http://${h}`, `https://${h}`])];
  return out;
}

/** Throws `host-forbidden` or `origin-forbidden`; returns when the request may proceed. */
export function checkHostAndOrigin(guard: HostGuardOptions, host: string | null, origin: string | null): void {
  if (guard.allowedHosts && !(host !== null && includes(guard.allowedHosts, host))) {
    throw new ContinuityError(
      'host-forbidden',
      // The echoed value is cut short: it is attacker input, and the hint must stay readable.
      // Behind a proxy the fix is to forward the client's Host and allow the public name:
      // allowing the upstream name the proxy sends instead would let every Host through.
      `Forbidden: Host ${JSON.stringify(String(host).slice(0, 60))} not allowed (behind a proxy? forward the client's Host, e.g. nginx: proxy_set_header Host $http_host, ` +
        `and allow the public name: serve --allowed-hosts NAME, or hostGuard.allowedHosts; not the proxy's upstream name)`,
    );
  }
  if (origin !== null && guard.allowedOrigins && !includes(guard.allowedOrigins, origin)) {
    throw new ContinuityError(
      'origin-forbidden',
      `Forbidden: Origin ${JSON.stringify(origin.slice(0, 60))} not allowed (allow it: serve --allowed-hosts, or hostGuard.allowedOrigins)`,
    );
  }
}

/** Exact match, or a port-less entry matching the value's name on any port. */
function includes(list: string[], value: string): boolean {
  const v = value.toLowerCase();
  const name = withoutPort(v);
  return list.some((x) => {
    const e = x.toLowerCase();
    return e === v || (withoutPort(e) === e && e === name);
  });
}

/** `host:port` → `host`; `[::1]:3000` → `[::1]`; `http://h:1` → `http://h`. */
function withoutPort(value: string): string {
  const m = /^(.*?)(:\d+)$/.exec(value);
  if (!m || m[1] === undefined) return value;
  // A bare IPv6 address ends in ":digits" too: only strip a port after "]" or a non-colon name.
  return m[1].endsWith(']') || !m[1].includes(':') || m[1].includes('://') ? m[1] : value;
}
