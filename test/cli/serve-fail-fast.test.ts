/**
 * Every way `serve` can fail to start, as a real process: it exits non-zero (2 for a bad
 * option, 1 for an environment that cannot work), with one line naming the problem, and
 * its port is free again. Bounds only a hang misses: 10 s from the message to the exit (a
 * process that printed its failure and stayed up was the bug), 60 s for the whole run (a
 * loaded machine takes seconds to load the CLI through tsx); the measured times are printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { cliArgv, ROOT } from './run-cli.js';

/** Runs the CLI; resolves with its exit code, its stderr, and how long after its first stderr byte it exited. */
function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stderr: string; afterMessageMs: number; totalMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, cliArgv(args), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let messageAt: number | undefined;
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    messageAt ??= performance.now();
    stderr += c;
  });
  let hung = false;
  const hang = setTimeout(() => (hung = true), 60_000);
  const afterMessage = setInterval(() => {
    if (messageAt !== undefined && performance.now() - messageAt > 10_000) hung = true;
    if (hung) child.kill('SIGKILL');
  }, 100);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(hang);
      clearInterval(afterMessage);
      const now = performance.now();
      resolve({ code: hung ? null : code, stderr, afterMessageMs: now - (messageAt ?? now), totalMs: now - started });
    });
  });
}

function listenOn(port: number, host = '127.0.0.1'): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}

async function freePort(): Promise<number> {
  const s = await listenOn(0);
  const { port } = s.address() as AddressInfo;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

test('every startup failure exits non-zero within the bound and frees its port', { timeout: 300_000 }, async (t) => {
  const holder = await listenOn(0);
  t.after(() => holder.close());
  const busy = (holder.address() as AddressInfo).port;
  const cases: { label: string; args: string[]; env?: Record<string, string>; code: number; message: RegExp }[] = [
    { label: '--path without its slash', args: ['--path', 'mcp'], code: 2, message: /--path must start with \// },
    { label: '--path with a query', args: ['--path', '/mcp?x=1'], code: 2, message: /--path must start with \// },
    { label: '--port out of range', args: ['--port', '70000'], code: 2, message: /--port must be an integer/ },
    { label: '--drain-ms negative', args: ['--drain-ms', '-5'], code: 2, message: /--drain-ms needs a value/ },
    { label: '--drain-ms=-5', args: ['--drain-ms=-5'], code: 2, message: /--drain-ms must be an integer/ },
    { label: '--unready-ms not a number', args: ['--unready-ms', 'soon'], code: 2, message: /--unready-ms must be/ },
    { label: '--metrics malformed', args: ['--metrics', 'nine'], code: 2, message: /--metrics takes/ },
    { label: '--log-format unknown', args: ['--log-format', 'yaml'], code: 2, message: /--log-format takes/ },
    { label: '--store unknown', args: ['--store', 'postgres://x'], code: 2, message: /Unknown store/ },
    { label: '--allowed-hosts with a path', args: ['--allowed-hosts', 'a/b'], code: 2, message: /--allowed-hosts takes/ },
    { label: 'the port is busy', args: ['--port', String(busy)], code: 1, message: /already in use/ },
    { label: 'the metrics port is busy', args: ['--metrics', `127.0.0.1:${busy}`], code: 1, message: /--metrics: port .* already in use/ },
    { label: '--host not of this machine', args: ['--host', '203.0.113.7'], code: 1, message: /cannot bind 203\.0\.113\.7/ },
    { label: '--host not of this machine, port 0', args: ['--host', '203.0.113.7', '--port', '0'], code: 1, message: /cannot bind 203\.0\.113\.7/ },
    { label: 'a missing SQLite directory', args: ['--store', 'sqlite:/nonexistent-dir/x.db'], code: 1, message: /does not exist/ },
    {
      label: 'OTLP over gRPC',
      args: [],
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
      code: 1,
      message: /OTLP\/HTTP only/,
    },
  ];
  for (const c of cases) {
    // A port of its own, free now: it must be free again once serve has failed.
    const port = c.args.includes('--port') ? undefined : await freePort();
    const args = ['serve', '--store', 'memory', ...(port === undefined ? [] : ['--port', String(port)]), ...c.args];
    const r = await run(args, { ...process.env, ...c.env });
    assert.notEqual(r.code, null, `${c.label}: still running 10 s after its message (killed)\n${r.stderr}`);
    assert.equal(r.code, c.code, `${c.label}: exit ${r.code}\n${r.stderr}`);
    assert.match(r.stderr, c.message, c.label);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${c.label}: one line\n${r.stderr}`);
    if (port !== undefined) await listenOn(port).then((s) => new Promise((resolve) => s.close(resolve)));
    t.diagnostic(`${c.label}: exit ${r.code} ${r.afterMessageMs.toFixed(0)} ms after its message, ${r.totalMs.toFixed(0)} ms in all (tsx start included)`);
  }
});
