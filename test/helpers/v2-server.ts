/** A small server on the official SDK v2 (`@modelcontextprotocol/server`). */
import { McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

export function createV2Server(): McpServer {
  const server = new McpServer({ name: 'v2-test', version: '2.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('countdown', { inputSchema: z.object({ from: z.number().int().min(0) }) }, async ({ from }, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    for (let i = from; i > 0; i--) {
      if (token !== undefined) {
        await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: from - i + 1, total: from } });
      }
    }
    return { content: [{ type: 'text', text: `liftoff after ${from}` }] };
  });
  server.registerTool('ask', { inputSchema: z.object({ question: z.string() }) }, async ({ question }, ctx) => {
    const answer = await ctx.mcpReq.requestSampling({
      messages: [{ role: 'user', content: { type: 'text', text: question } }],
      maxTokens: 10,
    });
    const text = answer.content && !Array.isArray(answer.content) && answer.content.type === 'text' ? answer.content.text : '';
    return { content: [{ type: 'text', text: `model said: ${text}` }] };
  });
  return server;
}
