/**
 * Era detection on a dual-era URL: the SDK v2's documented routing (`isLegacyRequest` in
 * front of `createMcpHandler(…, { legacy: 'reject' })`) with our endpoint as the 2025-era
 * leg. The probe must say "dual" and audit the sessionful leg, which resumes safely.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { ProbeReport } from '../../src/cli/probe/model.js';
import { runCli } from './run-cli.js';

test('a dual-era server is detected as dual, and its 2025-era leg is audited', { timeout: 120_000 }, async (t) => {
  const { createMcpHandler, isLegacyRequest, hostHeaderValidationResponse, originValidationResponse, localhostAllowedHostnames, localhostAllowedOrigins } = await import('@modelcontextprotocol/server');
  const { createV2Server } = await import('../helpers/v2-server.js');
  const { createEndpoint } = await import('../../src/server/index.js');
  const { createExampleServer } = await import('../../src/example/index.js');
  const modern = createMcpHandler(() => createV2Server(), { legacy: 'reject' });
  const legacy = createEndpoint({ server: () => createExampleServer() });
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, { method: req.method ?? 'GET', headers: req.headers as Record<string, string>, body: req.method === 'POST' ? Buffer.concat(chunks) : null, signal: controller.signal });
      // Host/Origin validation in front of both legs, as the SDK's documentation of the entry asks.
      const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? originValidationResponse(request, localhostAllowedOrigins());
      const answer = refused ?? ((await isLegacyRequest(request)) ? await legacy.handle(request) : await modern.fetch(request));
      const head: Record<string, string> = {};
      answer.headers.forEach((v, k) => (head[k] = v));
      // Flushed now: a stream with nothing to send yet must still show its head.
      res.writeHead(answer.status, head).flushHeaders();
      if (answer.body === null) return void res.end();
      Readable.fromWeb(answer.body as WebReadableStream).on('error', () => res.destroy()).pipe(res);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    server.close();
    await legacy.close();
  });
  const r = await runCli(['probe', `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`, '--json'], { timeoutMs: 110_000 });
  const report = JSON.parse(r.stdout) as ProbeReport;
  assert.equal(report.server.era, 'dual', report.server.eraEvidence);
  assert.match(report.server.eraEvidence, /the 2025-era leg is audited/);
  assert.equal(report.checks.find((c) => c.id === 'resume-post')?.verdict, 'pass', 'the sessionful leg was probed');
  assert.deepEqual(report.checks.filter((c) => c.verdict === 'FAIL').map((c) => `${c.id}: ${c.detail}`), []);
  assert.equal(report.overall.line, 'resumes safely');
  assert.equal(r.code, 0);
});
