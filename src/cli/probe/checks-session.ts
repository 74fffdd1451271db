/** Checks on sessions and headers: unknown sessions, DELETE, the replay epoch, Host/Origin. */
import { Header } from '../../protocol/headers.js';
import { randomBytes } from 'node:crypto';
import { isLoopbackHost } from '../../server/host-guard.js';
import { fail, notApplicable, pass, type Check } from './check.js';
import { LATEST_VERSION, closeSession, openSession, sessionHeaders } from './session.js';
import { exchange, postWithHost } from './wire.js';

const ping = (id: number): unknown => ({ jsonrpc: '2.0', id, method: 'ping' });

export const unknownSession: Check = {
  id: 'unknown-session',
  title: 'Unknown session gets 404',
  guards: 'session resurrection: a stale session id accepted as a new session, capabilities silently gone',
  session: true,
  severity: 'deviation',
  async run(ctx) {
    const id = randomBytes(16).toString('hex');
    const headers = { ...ctx.headers, [Header.SessionId]: id, [Header.ProtocolVersion]: LATEST_VERSION };
    const post = await exchange({ method: 'POST', url: ctx.url, headers, body: ping(1) }, ctx.timeoutMs);
    const get = await exchange({ method: 'GET', url: ctx.url, headers, idleMs: 500 }, ctx.timeoutMs);
    const evidence = [post.evidence, get.evidence];
    // A 2xx is resurrection: the client believes its old session (and what it set) lives on.
    const severity = post.status < 300 || get.status < 300 ? 'loss' : 'deviation';
    if (post.status !== 404) return { ...fail(`POST with an unknown Mcp-Session-Id got HTTP ${post.status}, not 404`, evidence), severity };
    if (get.status !== 404) return { ...fail(`GET with an unknown Mcp-Session-Id got HTTP ${get.status}, not 404`, evidence), severity };
    return pass('POST and GET with an unknown session id both got 404', evidence);
  },
};

export const deleteSession: Check = {
  id: 'delete-session',
  title: 'DELETE ends the session; then 404',
  guards: 'a terminated session that keeps answering (and resuming) as if alive',
  session: true,
  severity: 'deviation',
  async run(ctx) {
    const session = await openSession(ctx);
    // A cursor of the session, taken before DELETE, so the check can try to resume after it.
    const before = await exchange({ method: 'POST', url: ctx.url, headers: sessionHeaders(session), body: ping(session.nextId++) }, ctx.timeoutMs);
    const cursor = before.events.find((e) => e.id)?.id;
    const del = await exchange({ method: 'DELETE', url: ctx.url, headers: sessionHeaders(session) }, ctx.timeoutMs);
    if (del.status === 405) return notApplicable('the server does not let clients end sessions (DELETE → 405)', [del.evidence]);
    const after = await exchange({ method: 'POST', url: ctx.url, headers: sessionHeaders(session), body: ping(session.nextId++) }, ctx.timeoutMs);
    const evidence = [del.evidence, after.evidence];
    if (del.status < 200 || del.status >= 300) return fail(`DELETE got HTTP ${del.status}`, evidence);
    if (after.status !== 404) return fail(`a request after DELETE got HTTP ${after.status}, not 404`, evidence);
    const resumes = [await exchange({ method: 'GET', url: ctx.url, headers: sessionHeaders(session), idleMs: 500, cutWhen: () => true }, ctx.timeoutMs)];
    if (cursor !== undefined)
      resumes.push(
        await exchange(
          { method: 'GET', url: ctx.url, headers: sessionHeaders(session, { [Header.LastEventId]: cursor }), idleMs: 500, cutWhen: () => true },
          ctx.timeoutMs,
        ),
      );
    evidence.push(...resumes.map((r) => r.evidence));
    const served = resumes.find((r) => r.status !== 404);
    if (served)
      return fail(
        `a ${served === resumes[1] ? 'resume (GET with Last-Event-ID)' : 'GET stream'} after DELETE got HTTP ${served.status}, not 404: the terminated session is still served`,
        evidence,
      );
    return pass(`DELETE got ${del.status}; a POST, a GET${cursor === undefined ? '' : ' and a resume'} after it got 404`, evidence);
  },
};

export const replayEpoch: Check = {
  id: 'replay-epoch',
  title: 'Replay epoch header present and stable',
  guards: 'a reset or lost event log that a resuming client cannot tell from the one it saw',
  session: true,
  severity: 'hygiene',
  async run(ctx) {
    const session = await openSession(ctx);
    try {
      const get = await exchange({ method: 'GET', url: ctx.url, headers: sessionHeaders(session), cutWhen: () => true, idleMs: 500 }, ctx.timeoutMs);
      const evidence = [session.init.evidence, get.evidence];
      if (session.epoch === null) return fail('no X-MCP-Replay-Epoch header on the initialize response: a reset log is undetectable', evidence);
      const again = get.headers.get(Header.ReplayEpoch);
      if (get.status === 200 && again !== session.epoch)
        return fail(`the GET stream's epoch ${JSON.stringify(again)} differs from initialize's ${JSON.stringify(session.epoch)}`, evidence);
      return pass(`epoch ${session.epoch} on initialize${get.status === 200 ? ' and on the GET stream' : ''}`, evidence);
    } finally {
      await closeSession(ctx, session);
    }
  },
};

export const hostOrigin: Check = {
  id: 'host-origin',
  title: 'Host and Origin validated (DNS rebinding)',
  guards: "a web page on another site driving a local server through the user's browser",
  session: false,
  severity: 'deviation',
  async run(ctx) {
    if (!isLoopbackHost(ctx.url.hostname)) return notApplicable(`${ctx.url.hostname} is not a loopback address; Host validation is for local servers`);
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: LATEST_VERSION, capabilities: {}, clientInfo: { name: 'probe', version: '1' } },
    };
    const host = await postWithHost(ctx.url, `rebind.example:${ctx.url.port || 80}`, init, ctx.timeoutMs, ctx.headers);
    const origin = await exchange({ method: 'POST', url: ctx.url, headers: { ...ctx.headers, origin: 'http://rebind.example' }, body: init }, ctx.timeoutMs);
    const evidence = [host.evidence, origin.evidence];
    if (host.status !== 403 && origin.status !== 403)
      return fail(`a foreign Host got HTTP ${host.status} and a foreign Origin HTTP ${origin.status}; neither was refused`, evidence);
    if (origin.status !== 403) return fail(`a foreign Origin got HTTP ${origin.status}, not 403`, evidence);
    if (host.status !== 403) return fail(`a foreign Host got HTTP ${host.status}, not 403`, evidence);
    return pass('a foreign Host and a foreign Origin both got 403', evidence);
  },
};
