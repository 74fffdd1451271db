/**
 * The page of the browser test: the SDK `Client` on `ContinuityClientTransport`, bundled
 * from `mcp-continuity/client` by esbuild for the browser, driven by test/browser/client.test.ts
 * through `window.mcpScenario`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ContinuityClientTransport, isContinuityError, type DivergenceReport } from 'mcp-continuity/client';

/** What a scenario saw, as JSON for the test. */
export interface ScenarioResult {
  tools: string[];
  progress: number[];
  result: unknown;
  /** `code` of a ContinuityError, or the `data.reason` of the SDK's McpError for a refused request. */
  error: { code: string | undefined; message: string } | undefined;
  divergences: string[];
  /** Codes of the errors the transport reported (`Client.onerror`). */
  reported: string[];
}

async function scenario(url: string, count: number, options: { upgrade?: boolean } = {}): Promise<ScenarioResult> {
  const divergences: DivergenceReport[] = [];
  const transport = new ContinuityClientTransport(url, {
    reconnect: { initialDelayMs: 10, maxDelayMs: 100 },
    onDivergence: (report) => divergences.push(report),
    upgrade: options.upgrade === true ? { websocket: true } : undefined,
  });
  const client = new Client({ name: 'browser-test', version: '1.0.0' });
  const out: ScenarioResult = { tools: [], progress: [], result: undefined, error: undefined, divergences: [], reported: [] };
  client.onerror = (error) => out.reported.push(isContinuityError(error) ? error.code : error.message);
  try {
    await client.connect(transport);
    out.tools = (await client.listTools()).tools.map((t) => t.name);
    const result = await client.callTool({ name: 'emit', arguments: { count, intervalMs: 20 } }, undefined, {
      onprogress: (p) => out.progress.push(p.progress),
      resetTimeoutOnProgress: true,
    });
    out.result = result.structuredContent;
  } catch (error) {
    const reason = (error as { data?: { reason?: unknown } }).data?.reason;
    out.error = { code: isContinuityError(error) ? error.code : typeof reason === 'string' ? reason : undefined, message: (error as Error).message };
  } finally {
    out.divergences = divergences.map((d) => d.code);
    await client.close().catch(() => {});
  }
  return out;
}

(globalThis as { mcpScenario?: typeof scenario }).mcpScenario = scenario;
