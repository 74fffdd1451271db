/** Runs every check against one server and gathers the report. */
import { runCheck, type Check, type CheckContext } from './check.js';
import { deleteSession, hostOrigin, replayEpoch, unknownSession } from './checks-session.js';
import { foreignCursor, idsIncrease, priming, resumeGet, resumePost, sameMillisecond, unknownCursor } from './checks-resume.js';
import { replica, restart, upgradeBoundary } from './checks-boundary.js';
import type { CheckResult, ProbeReport } from './model.js';
import { closeSession, discoverTool, openSession, sessionHeaders, type ToolPlan } from './session.js';
import { exchange } from './wire.js';

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
];

/** Options of {@link runProbe}. */
export interface ProbeOptions {
  url: URL;
  timeoutMs?: number | undefined;
  /** Headers sent with every request (say, `authorization`). */
  headers?: Record<string, string> | undefined;
  /** The tool to stream with; found by itself when omitted. */
  tool?: ToolPlan | undefined;
  restartCmd?: string | undefined;
  replicas?: URL[] | undefined;
  /** Called as each check starts and ends (for a live display). */
  onProgress?: ((event: { check: Check; index: number; total: number; result?: CheckResult }) => void) | undefined;
}

/** Probes `options.url`. Throws only if the server cannot be initialized at all. */
export async function runProbe(options: ProbeOptions): Promise<ProbeReport> {
  const startedAt = new Date().toISOString();
  const target = { url: options.url, timeoutMs: options.timeoutMs ?? 10_000, headers: options.headers ?? {} };
  const session = await openSession(target);
  let tool = options.tool;
  let stateless = false;
  try {
    tool ??= await discoverTool(target, session);
    if (session.id === undefined) {
      // No session: a 2026-07-28 style server if GET is refused with 405.
      const get = await exchange({ method: 'GET', url: target.url, headers: sessionHeaders(session), idleMs: 500, cutWhen: () => true }, target.timeoutMs);
      stateless = get.status === 405 || get.status === 400;
    }
  } finally {
    await closeSession(target, session);
  }
  const ctx: CheckContext = { ...target, tool, stateless, events: 30, intervalMs: 5, restartCmd: options.restartCmd, replicas: options.replicas ?? [] };
  const checks: CheckResult[] = [];
  for (const [index, check] of CHECKS.entries()) {
    options.onProgress?.({ check, index, total: CHECKS.length });
    const result = await runCheck(check, ctx);
    checks.push(result);
    options.onProgress?.({ check, index, total: CHECKS.length, result });
  }
  return {
    url: options.url.href,
    startedAt,
    server: { name: session.serverName, protocolVersion: session.protocolVersion, stateless, tool: tool?.name },
    checks,
  };
}
