/**
 * Which protocol era a server speaks. A 2026-07-28 server answers `server/discover` (a
 * request carrying the per-request `_meta` envelope) and keeps no sessions; a 2025-era
 * server answers `initialize` and, if it keeps sessions, returns `Mcp-Session-Id`. A URL
 * that does both is dual-era: its 2025-era leg, with the sessions, is what gets audited.
 */
import { Header } from '../../protocol/headers.js';
import type { Era } from './model.js';
import { openSession, sessionHeaders, type ProbeSession, type Target } from './session.js';
import { exchange } from './wire.js';

/** The revision without sessions or resumption. */
export const MODERN_VERSION = '2026-07-28';

/** What era detection learned. */
export interface EraFinding {
  era: Era;
  /** The 2025-era leg keeps no sessions (or there is none): nothing to resume. */
  stateless: boolean;
  /** An initialized 2025-era session, when the server has that leg. */
  session: ProbeSession | undefined;
  /** The modern leg's server name, when it answered. */
  modernName: string | undefined;
  /** How the era was told, in one line. */
  evidence: string;
}

/** Sends `server/discover` as a 2026-07-28 client would; the supported versions, or undefined. */
async function discover(target: Target): Promise<{ versions: string[]; name: string | undefined } | undefined> {
  const meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
    'io.modelcontextprotocol/clientInfo': { name: 'mcp-continuity-probe', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
  };
  const answer = await exchange(
    {
      method: 'POST',
      url: target.url,
      headers: { ...target.headers, [Header.ProtocolVersion]: MODERN_VERSION, 'mcp-method': 'server/discover' },
      body: { jsonrpc: '2.0', id: 'discover', method: 'server/discover', params: { _meta: meta } },
      idleMs: 2000,
    },
    target.timeoutMs,
  );
  const message = (answer.json ?? undefined) as { result?: { supportedVersions?: unknown; _meta?: Record<string, { name?: string } | undefined> } } | undefined;
  const versions = message?.result?.supportedVersions;
  if (answer.status !== 200 || !Array.isArray(versions)) return undefined;
  return { versions: versions.filter((v): v is string => typeof v === 'string'), name: message?.result?._meta?.['io.modelcontextprotocol/serverInfo']?.name };
}

/** Tells the era of `target`; throws (as initialize would) when the server speaks neither. */
export async function detectEra(target: Target): Promise<EraFinding> {
  const modern = await discover(target).catch(() => undefined);
  const speaksModern = modern !== undefined && modern.versions.some((v) => v >= MODERN_VERSION);
  let session: ProbeSession;
  try {
    session = await openSession(target);
  } catch (error) {
    if (!speaksModern) throw error;
    return {
      era: 'modern',
      stateless: true,
      session: undefined,
      modernName: modern.name,
      evidence: `server/discover lists ${modern.versions.join(', ')}; initialize is refused (${(error as Error).message.split('\n')[0]})`,
    };
  }
  let stateless = false;
  if (session.id === undefined) {
    // No session: GET answered 405 (or 400) means a stateless server, nothing to resume.
    const get = await exchange({ method: 'GET', url: target.url, headers: sessionHeaders(session), idleMs: 500, cutWhen: () => true }, target.timeoutMs);
    stateless = get.status === 405 || get.status === 400;
  }
  const legacyLeg = `initialize gives protocol ${session.protocolVersion} ${session.id === undefined ? 'without a session' : 'with a session'}`;
  if (!speaksModern) return { era: 'legacy', stateless, session, modernName: undefined, evidence: `server/discover is not served; ${legacyLeg}` };
  const era: Era = session.id === undefined ? 'modern' : 'dual';
  return {
    era,
    stateless,
    session,
    modernName: modern.name,
    evidence: `server/discover lists ${modern.versions.join(', ')}; ${legacyLeg}${era === 'modern' ? ' (a stateless fallback): resumption does not apply' : ': the 2025-era leg is audited'}`,
  };
}
