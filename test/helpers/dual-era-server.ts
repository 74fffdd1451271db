/**
 * A dual-era URL the way the SDK v2 documents it: `isLegacyRequest` in front of
 * `createMcpHandler(…, { legacy: 'reject' })`, with our endpoint as the 2025-era leg, and
 * Host/Origin validation in front of both. Served by node:http on a free loopback port.
 */
import { createServer } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  originValidationResponse,
} from '@modelcontextprotocol/server';
import { createEndpoint } from '../../src/server/index.js';
import { createExampleServer } from '../../src/example/index.js';
import { createV2Server } from './v2-server.js';

export async function startDualEraServer(): Promise<{ url: URL; close(): Promise<void> }> {
  const modern = createMcpHandler(() => createV2Server(), { legacy: 'reject' });
  const legacy = createEndpoint({ server: () => createExampleServer() });
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const controller = new AbortController();
      res.on('close', () => controller.abort());
      const request = new Request(`http://${req.headers.host ?? '127.0.0.1'}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers: req.headers as Record<string, string>,
        body: req.method === 'POST' ? Buffer.concat(chunks) : null,
        signal: controller.signal,
      });
      const refused = hostHeaderValidationResponse(request, localhostAllowedHostnames()) ?? originValidationResponse(request, localhostAllowedOrigins());
      const answer = refused ?? ((await isLegacyRequest(request)) ? await legacy.handle(request) : await modern.fetch(request));
      const head: Record<string, string> = {};
      answer.headers.forEach((v, k) => (head[k] = v));
      // Flushed now: a stream with nothing to send yet must still show its head.
      res.writeHead(answer.status, head).flushHeaders();
      if (answer.body === null) return void res.end();
      Readable.fromWeb(answer.body as WebReadableStream)
        .on('error', () => res.destroy())
        .pipe(res);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await legacy.close();
    },
  };
}
