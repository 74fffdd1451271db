/**
 * Runs each framework example as a user would (it imports `mcp-continuity/...` through the
 * package's exports, so `npm run build` must have run), then talks to it with the official
 * SDK client: tools/list, a call with progress; then SIGTERM ends it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from '../helpers/processes.js';
import { within } from '../helpers/wait.js';

const root = new URL('../../', import.meta.url);

describe('framework examples', () => {
  for (const name of ['express', 'fastify', 'hono']) {
    it(`examples/${name}.ts serves tools/list and a call with progress, and exits on SIGTERM`, { timeout: 60_000 }, async () => {
      assert.ok(existsSync(new URL('dist/frameworks/express.js', root)), 'dist/ is missing: run npm run build first');
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(`examples/${name}.ts`, root))], {
        cwd: fileURLToPath(root),
        env: { ...process.env, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      try {
        const line = await within(
          new Promise<string>((resolve, reject) => {
            createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
            child.once('exit', (code) => reject(new Error(`examples/${name}.ts exited with ${code} before listening`)));
          }),
          `examples/${name}.ts to listen`,
          30_000,
        );
        const url = new URL(/http:\/\/\S+/.exec(line)?.[0] ?? '');
        const client = new Client({ name: `example-${name}`, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(url));
        try {
          const { tools } = await client.listTools();
          assert.deepEqual(
            tools.map((t) => t.name),
            ['count'],
          );
          const progress: number[] = [];
          const result = await client.callTool({ name: 'count', arguments: { n: 5 } }, undefined, { onprogress: (p) => progress.push(p.progress) });
          assert.deepEqual(result.content, [{ type: 'text', text: 'counted to 5' }]);
          assert.deepEqual(progress, [1, 2, 3, 4, 5]);
        } finally {
          await client.close();
        }
        child.kill('SIGTERM');
        assert.equal(await within(exited, `examples/${name}.ts to exit on SIGTERM`), 0);
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    });
  }
});
