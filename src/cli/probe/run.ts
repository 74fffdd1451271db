/** Runs every check against one server and gathers the report. */
import { runCheck, type Check, type CheckContext } from './check.js';
import { deleteSession, hostOrigin, replayEpoch, unknownSession } from './checks-session.js';
import { idsIncrease, priming, resumeGet, resumePost, sameMillisecond, unknownCursor } from './checks-resume.js';
import { foreignCursor } from './checks-leak.js';
import { replica, restart, upgradeBoundary } from './checks-boundary.js';
import { semanticContinuity } from './checks-semantic.js';
import { atMostOnce } from './checks-once.js';
import { detectEra } from './era.js';
import type { CheckResult, ProbeReport } from './model.js';
import { overallVerdict } from './overall.js';
import { redact, redactText, secretsOf, splitCredentials } from './redact.js';
import { closeSession, discoverTool, type ToolPlan } from './session.js';

/** Every check, in the order they run and are reported. */
export const CHECKS: readonly Check[] = [
  unknownSession,
  deleteSession,
  priming,
  resumeGet,
  resumePost,
  sameMillisecond,
  unknownCursor,
  foreignCursor,
  idsIncrease,
  replayEpoch,
  hostOrigin,
  upgradeBoundary,
  restart,
  replica,
  semanticContinuity,
  atMostOnce,
];

/** Options of {@link runProbe}. */
export interface ProbeOptions {
  url: URL;
  timeoutMs?: number | undefined;
  /** Headers sent with every request (say, `authorization`); their values never appear in the report. */
  headers?: Record<string, string> | undefined;
  /** The tool to stream with; found by itself when omitted. */
  tool?: ToolPlan | undefined;
  restartCmd?: string | undefined;
  replicas?: URL[] | undefined;
  /** Called as each check starts and ends (for a live display). */
  onProgress?: ((event: { check: Check; index: number; total: number; result?: CheckResult }) => void) | undefined;
}

/** The secrets of `options` (header values, credentials in URLs), for redacting anything shown. */
export function probeSecrets(options: Pick<ProbeOptions, 'url' | 'headers' | 'replicas'>): string[] {
  const { authorization } = splitCredentials(options.url);
  return secretsOf({ ...options.headers, ...(authorization ? { 'authorization (from the URL)': authorization } : {}) }, [
    options.url,
    ...(options.replicas ?? []),
  ]);
}

/**
 * Probes `options.url`. Throws only if the server cannot be initialized at all (the error's
 * message is redacted too). Credentials in the URL are sent as an `authorization` header.
 */
export async function runProbe(options: ProbeOptions): Promise<ProbeReport> {
  const secrets = probeSecrets(options);
  try {
    return redact(await probeUnredacted(options), secrets);
  } catch (error) {
    if (error instanceof Error) error.message = redactText(error.message, secrets);
    throw error;
  }
}

async function probeUnredacted(options: ProbeOptions): Promise<ProbeReport> {
  const startedAt = new Date().toISOString();
  const { url, authorization } = splitCredentials(options.url);
  const headers = { ...(authorization ? { authorization } : {}), ...options.headers };
  const target = { url, timeoutMs: options.timeoutMs ?? 10_000, headers };
  const found = await detectEra(target);
  const session = found.session;
  let tool = options.tool;
  try {
    if (session) tool ??= await discoverTool(target, session);
  } finally {
    if (session) await closeSession(target, session);
  }
  const offers = { logging: session?.capabilities.logging !== undefined, subscribe: session?.capabilities.resources?.subscribe === true };
  const replicas = (options.replicas ?? []).map((r) => splitCredentials(r).url);
  const ctx: CheckContext = { ...target, tool, stateless: found.stateless, offers, events: 30, intervalMs: 5, restartCmd: options.restartCmd, replicas };
  const checks: CheckResult[] = [];
  for (const [index, check] of CHECKS.entries()) {
    options.onProgress?.({ check, index, total: CHECKS.length });
    const result = await runCheck(check, ctx);
    checks.push(result);
    options.onProgress?.({ check, index, total: CHECKS.length, result });
  }
  return {
    url: url.href,
    startedAt,
    server: {
      name: session?.serverName ?? found.modernName,
      protocolVersion: session?.protocolVersion,
      stateless: found.stateless,
      tool: tool?.name,
      era: found.era,
      eraEvidence: found.evidence,
    },
    checks,
    overall: overallVerdict(found.era, found.stateless, checks),
  };
}
