/**
 * `serve` with `OTEL_EXPORTER_OTLP_ENDPOINT` set exports its spans over OTLP/HTTP: a real
 * receiver (node:http, decoding the OTLP JSON body) gets the spans of a real process's
 * calls, under the service name of `OTEL_SERVICE_NAME`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startCli, stop } from './run-cli.js';
import { waitFor } from '../helpers/wait.js';

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}
interface OtlpTraces {
  resourceSpans: {
    resource: { attributes: KeyValue[] };
    scopeSpans: { scope: { name: string }; spans: { name: string; kind: number; attributes: KeyValue[] }[] }[];
  }[];
}

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8').on('data', (c: string) => (text += c));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

test('serve exports spans to an OTLP/HTTP receiver, with the service name', { timeout: 120_000 }, async (t) => {
  const received: { path: string; contentType: string; traces: OtlpTraces }[] = [];
  const receiver = createServer((req, res) => {
    void body(req).then((text) => {
      received.push({ path: req.url ?? '', contentType: String(req.headers['content-type']), traces: JSON.parse(text) as OtlpTraces });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => receiver.close());
  const { port } = receiver.address() as AddressInfo;

  const { child, line } = await startCli(['serve', '--port', '0', '--store', 'memory', '--log-format', 'json'], {
    env: {
      ...process.env,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'otlp-under-test',
      // Batches leave every 100 ms instead of every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    },
  });
  t.after(() => stop(child));
  const listening = JSON.parse(line) as { url: string; traces?: string };
  assert.equal(listening.traces, `http://127.0.0.1:${port}/v1/traces`, 'the listening line names where spans go');

  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await fetch(listening.url, {
    method: 'POST',
    headers,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    }),
  });
  await init.text();
  const session = { 'mcp-session-id': init.headers.get('mcp-session-id') ?? '', 'mcp-protocol-version': '2025-11-25' };
  await (
    await fetch(listening.url, {
      method: 'POST',
      headers: { ...headers, ...session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    })
  ).text();
  const call = await fetch(listening.url, {
    method: 'POST',
    headers: { ...headers, ...session },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 } } }),
  });
  assert.match(await call.text(), /"text":"5"/);

  const span = await waitFor(
    () => {
      for (const r of received)
        for (const rs of r.traces.resourceSpans)
          for (const ss of rs.scopeSpans) {
            const found = ss.spans.find((s) => s.name === 'tools/call add');
            if (found) return { r, rs, ss, found };
          }
      return undefined;
    },
    () => `a span "tools/call add" (received ${received.length} exports)`,
    30_000,
  );
  assert.equal(span.r.path, '/v1/traces');
  assert.match(span.r.contentType, /application\/json/);
  const service = span.rs.resource.attributes.find((a) => a.key === 'service.name');
  assert.equal(service?.value.stringValue, 'otlp-under-test');
  assert.equal(span.ss.scope.name, 'mcp-continuity');
  assert.equal(span.found.kind, 2, 'a SERVER span');
  assert.equal(span.found.attributes.find((a) => a.key === 'gen_ai.tool.name')?.value.stringValue, 'add');
});
