/** `mcp-continuity probe <url>`: arguments, the live display, and where the report goes. */
import { accessSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { UsageError } from '../usage.js';
import { renderHtml } from './render-html.js';
import { renderJunit } from './render-junit.js';
import { progressLine, renderText } from './render-text.js';
import { probeSecrets, runProbe } from './run.js';
import { redactText } from './redact.js';
import { customTool } from './session.js';
import { ProbeUnreachable } from './wire.js';
import { ContinuityError } from '../../protocol/errors.js';

function parseUrl(text: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL, got ${JSON.stringify(text)}`, 'probe');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag} must be an http(s) URL, got ${JSON.stringify(text)}`, 'probe');
  return url;
}

/** Fails now, not after a minute of probing, if `file` cannot be written. */
function checkWritable(file: string | undefined, flag: string): void {
  if (file === undefined) return;
  const dir = dirname(resolve(file));
  let usable = false;
  try {
    usable = statSync(dir).isDirectory();
    if (usable) accessSync(dir, constants.W_OK);
  } catch {
    usable = false;
  }
  if (!usable) throw new UsageError(`${flag} ${file}: directory ${dir} does not exist or is not writable`, 'probe');
}

/** Runs the probe; resolves to the exit code of the overall verdict (see `EXIT_CODES`). */
export async function probe(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      tool: { type: 'string' },
      args: { type: 'string' },
      'restart-cmd': { type: 'string' },
      replica: { type: 'string', multiple: true, default: [] },
      header: { type: 'string', multiple: true, default: [] },
      timeout: { type: 'string', default: '10000' },
      json: { type: 'boolean', default: false },
      junit: { type: 'string' },
      report: { type: 'string' },
      'no-color': { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (positionals.length !== 1 || positionals[0] === undefined)
    throw new UsageError(
      positionals.length === 0 ? 'probe needs the server URL, e.g. http://127.0.0.1:3000/mcp' : `probe takes one URL, got ${positionals.length} arguments`,
      'probe',
    );
  const url = parseUrl(positionals[0], 'the URL');
  const replicas = values.replica.map((r) => parseUrl(r, '--replica'));
  const timeoutMs = /^\d+$/.test(values.timeout) ? Number(values.timeout) : NaN;
  if (!(timeoutMs >= 100)) throw new UsageError(`--timeout must be a number of milliseconds ≥ 100, got ${JSON.stringify(values.timeout)}`, 'probe');
  if (values.args !== undefined && values.tool === undefined) throw new UsageError('--args needs --tool NAME', 'probe');
  let args: Record<string, unknown> = {};
  if (values.args !== undefined) {
    try {
      args = JSON.parse(values.args) as Record<string, unknown>;
    } catch {
      throw new UsageError(`--args must be a JSON object, got ${JSON.stringify(values.args)}`, 'probe');
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      throw new UsageError(`--args must be a JSON object, got ${JSON.stringify(values.args)}`, 'probe');
  }
  checkWritable(values.junit, '--junit');
  checkWritable(values.report, '--report');
  const headers: Record<string, string> = {};
  for (const h of values.header) {
    const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/.exec(h);
    // The value is never echoed: it may be a secret.
    if (!m || m[1] === undefined || m[2] === undefined)
      throw new UsageError('--header must look like "Name: value" (one of them has no "Name:" part)', 'probe');
    headers[m[1].toLowerCase()] = m[2];
  }
  const live = process.stderr.isTTY && !values.json;
  const colour = process.stdout.isTTY && !values['no-color'] && !process.env['NO_COLOR'];
  let report;
  try {
    report = await runProbe({
      url,
      timeoutMs,
      headers,
      tool: values.tool === undefined ? undefined : customTool(values.tool, args),
      restartCmd: values['restart-cmd'],
      replicas,
      onProgress: ({ check, index, total, result }) => {
        if (live) process.stderr.write(`\r\x1b[2K${progressLine(index, total, check.id, result?.verdict)}`);
      },
    });
  } catch (error) {
    const secrets = probeSecrets({ url, headers, replicas });
    if (error instanceof ProbeUnreachable)
      throw new ContinuityError('server-unreachable', redactText(`cannot reach ${url.href}: ${error.message}; is the server running?`, secrets));
    throw error;
  } finally {
    if (live) process.stderr.write('\r\x1b[2K');
  }
  if (values.junit !== undefined) writeFileSync(values.junit, renderJunit(report));
  if (values.report !== undefined) writeFileSync(values.report, renderHtml(report));
  console.log(values.json ? JSON.stringify(report, null, 2) : renderText(report, { colour, verbose: true }));
  return report.overall.exitCode;
}
