/**
 * Random and malformed HTTP/1.x requests from a seeded PRNG: request lines, headers and
 * bodies, mostly close enough to valid to get past the HTTP parser and into the adapter.
 */
export type Rand = () => number;

const pick = <T>(r: Rand, items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
const chance = (r: Rand, p: number): boolean => r() < p;

function randomBytes(r: Rand, max: number, alphabet?: string): string {
  const n = Math.floor(r() * max);
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet ? alphabet[Math.floor(r() * alphabet.length)] : String.fromCharCode(Math.floor(r() * 256));
  return out;
}

const PRINTABLE = ' !"#$%&()*+,-./0123456789:;<=>?@ABCXYZ[\\]^_`abcxyz{|}~\t\u00e9\u00ff';
const TARGET_CHARS = 'abcXYZ019-._~!$&\'()*+,;=:@/?%#[]^{}|\\"<>`';
const METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'CONNECT', 'TRACK', 'get', 'PO ST', 'M-SEARCH', 'PURGE', ''];
const TARGETS = [
  '/mcp',
  '/mcp?x=1',
  '/mcp#f',
  '/',
  '*',
  '/mcp/../mcp',
  '//evil/mcp',
  'http://evil/mcp',
  'http://u:p@h/mcp',
  '/%zz',
  '/mcp?%zz',
  '/m\u00e9',
  '/\u0000',
  '',
];
const VERSIONS = ['HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/1.', 'http/1.1', ''];
const BAD_HOSTS = [
  '',
  ' ',
  'a b',
  '[',
  '[::1',
  '[zz]',
  '%zz',
  '<x>',
  'a^b',
  'u@localhost',
  'x/y',
  'x:99999',
  'x:-1',
  'x:',
  ':80',
  'a\tb',
  '\u00ff',
  'ex%41mple',
];
const ACCEPTS = ['application/json, text/event-stream', 'text/event-stream', 'application/json', '*/*', '', 'text/event-stream;q=0', 'a/b, , ,'];
const TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', '', 'application/json;;;', 'APPLICATION/JSON'];
const VERSIONS_MCP = ['2025-11-25', '2025-06-18', '2025-03-26', '1999-01-01', '', 'x'.repeat(300)];
const BODIES = [
  '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
  '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]',
  '[]',
  '{}',
  'null',
  '1',
  '"x"',
  '{"jsonrpc":"2.0","id":{},"method":"x"}',
  '{"jsonrpc":"1.0","id":1,"method":"x"}',
  '{"jsonrpc":"2.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}',
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"0"}}}',
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":null}',
  '{"__proto__":{"x":1}}',
  '{',
  '\u0000\u0001',
  '\ufeff{}',
];

/** One request, as latin1 text (every char is one byte on the wire). */
export function randomRequest(r: Rand, port: number): string {
  if (chance(r, 0.03)) return randomBytes(r, 2000);
  const method = chance(r, 0.8) ? pick(r, ['GET', 'POST', 'DELETE']) : pick(r, METHODS);
  const target = chance(r, 0.8) ? '/mcp' : chance(r, 0.7) ? pick(r, TARGETS) : `/${randomBytes(r, 300, chance(r, 0.8) ? TARGET_CHARS : undefined)}`;
  const version = chance(r, 0.95) ? 'HTTP/1.1' : pick(r, VERSIONS);
  const lines = [`${method} ${target} ${version}`];
  if (!chance(r, 0.03)) {
    const good = `127.0.0.1:${port}`;
    const host = chance(r, 0.6) ? good : chance(r, 0.7) ? pick(r, BAD_HOSTS) : randomBytes(r, 40, PRINTABLE);
    lines.push(`Host: ${host}`);
    if (chance(r, 0.05)) lines.push(`Host: ${good}`);
  }
  if (chance(r, 0.8)) lines.push(`Accept: ${pick(r, ACCEPTS)}`);
  if (chance(r, 0.3)) lines.push(`Mcp-Session-Id: ${chance(r, 0.5) ? randomBytes(r, 40, 'abcdefABCDEF0123456789-_') : randomBytes(r, 80, PRINTABLE)}`);
  if (chance(r, 0.2)) lines.push(`MCP-Protocol-Version: ${pick(r, VERSIONS_MCP)}`);
  if (chance(r, 0.15)) lines.push(`Last-Event-ID: ${randomBytes(r, 120, PRINTABLE)}`);
  if (chance(r, 0.1)) lines.push(`Origin: ${pick(r, ['http://evil', 'null', '', 'http://127.0.0.1', randomBytes(r, 30)])}`);
  if (chance(r, 0.1)) {
    lines.push('Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13');
    if (chance(r, 0.7)) lines.push('Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==');
    if (chance(r, 0.7)) lines.push(`Sec-WebSocket-Protocol: ${pick(r, ['mcp.v1', 'x', '', 'mcp.v1, mcp.v1'])}`);
  }
  if (chance(r, 0.1)) lines.push('X-MCP-Upgrade: websocket');
  for (let i = Math.floor(r() * 3); i > 0; i--)
    lines.push(`x-${randomBytes(r, 20, 'abcxyz-_!#~')}: ${chance(r, 0.9) ? randomBytes(r, 60, PRINTABLE) : randomBytes(r, 60)}`);
  if (chance(r, 0.03)) lines.push(randomBytes(r, 200));

  let body = '';
  if (method !== 'GET' || chance(r, 0.05)) {
    body = chance(r, 0.6) ? pick(r, BODIES) : chance(r, 0.5) ? randomBytes(r, 3000) : mutate(r, pick(r, BODIES));
    if (chance(r, 0.7)) lines.push(`Content-Type: ${pick(r, TYPES)}`);
  }
  const framing = r();
  if (framing < 0.75) lines.push(`Content-Length: ${Buffer.byteLength(body, 'latin1')}`);
  else if (framing < 0.82)
    lines.push(`Content-Length: ${pick(r, ['-1', '99999999999', 'abc', '', String(body.length + 10), String(Math.max(0, body.length - 3))])}`);
  else if (framing < 0.95) {
    lines.push('Transfer-Encoding: chunked');
    body = chance(r, 0.7) ? `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n` : `${pick(r, ['zz', '-1', 'ffffffffffff', '5'])}\r\n${body}`;
  }
  if (chance(r, 0.05)) lines.push('Content-Length: 0', 'Transfer-Encoding: chunked');
  if (chance(r, 0.5)) lines.push('Connection: close');
  return `${lines.join(chance(r, 0.97) ? '\r\n' : '\n')}\r\n\r\n${body}`;
}

function mutate(r: Rand, text: string): string {
  const chars = [...text];
  for (let i = Math.floor(r() * 5) + 1; i > 0; i--) {
    const at = Math.floor(r() * (chars.length + 1));
    const op = r();
    if (op < 0.33) chars.splice(at, 1);
    else if (op < 0.66) chars.splice(at, 0, String.fromCharCode(Math.floor(r() * 256)));
    else chars.splice(at, 0, pick(r, ['{', '}', '[', ']', '"', ',', ':', '\\']));
  }
  return chars.join('');
}
