/**
 * Bearer auth the SDK's way on Express, with a real verifier: tokens are HMAC-SHA256-signed
 * claims (a JWT-like format, node:crypto only). Each session is bound to the token's client
 * and subject; a session ID presented with another user's token gets the 404 of an
 * unknown session. Tools see the token as `extra.authInfo`.
 *
 *   TOKEN_SECRET=… PORT=3000 npx tsx examples/auth.ts
 *   TOKEN_SECRET=… npx tsx examples/auth.ts --issue alice   # prints a token for user alice
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import express from 'express';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { createEndpoint, loopbackGuard } from 'mcp-continuity/server';
import { mcpExpress } from 'mcp-continuity/express';

const secret = process.env.TOKEN_SECRET;
if (!secret || secret.length < 32) throw new Error('set TOKEN_SECRET to at least 32 random characters');

interface Claims {
  client: string;
  sub: string;
  scopes: string[];
  exp: number;
}

const sign = (payload: string): Buffer => createHmac('sha256', secret).update(payload).digest();

/** `<claims as base64url JSON>.<HMAC-SHA256 of that, base64url>` */
function issue(claims: Claims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url');
  return `${payload}.${sign(payload).toString('base64url')}`;
}

const verifier = {
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const [payload, mac, extra] = token.split('.');
    if (!payload || !mac || extra !== undefined) throw new InvalidTokenError('malformed token');
    const given = Buffer.from(mac, 'base64url');
    const expected = sign(payload);
    // Constant time: the comparison must not tell an attacker how much of a forged MAC is right.
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidTokenError('bad signature');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Claims;
    if (!(claims.exp * 1000 > Date.now())) throw new InvalidTokenError('token expired');
    // extra.sub refines the session's principal: one client may act for many users.
    return { token, clientId: claims.client, scopes: claims.scopes, expiresAt: claims.exp, extra: { sub: claims.sub } };
  },
};

const issueFor = process.argv.indexOf('--issue');
if (issueFor >= 0) {
  console.log(issue({ client: 'my-app', sub: process.argv[issueFor + 1] ?? 'anonymous', scopes: ['mcp'], exp: Math.floor(Date.now() / 1000) + 3600 }));
} else {
  const port = Number(process.env.PORT ?? 3000);
  const endpoint = createEndpoint({
    server: () => {
      const server = new McpServer({ name: 'auth-example', version: '1.0.0' });
      server.registerTool('whoami', { description: 'Who the token says you are' }, (extra) => ({
        content: [{ type: 'text', text: String(extra.authInfo?.extra?.sub) }],
      }));
      return server;
    },
    hostGuard: loopbackGuard(port),
  });
  const app = express();
  app.all('/mcp', requireBearerAuth({ verifier, requiredScopes: ['mcp'] }), mcpExpress(endpoint));
  const server = app.listen(port, '127.0.0.1', () => console.log(`MCP endpoint at http://127.0.0.1:${port}/mcp`));
  process.once('SIGTERM', () => void endpoint.close().then(() => server.close()));
}
