import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CreateMessageResult } from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra } from '../logging.js';

/** Token budget the conformance scenario expects in the sampling request. */
const DEFAULT_MAX_TOKENS = 100;

/** Text of a sampling reply; non-text blocks are named rather than dropped. */
function replyText(content: CreateMessageResult['content']): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((block: { type: string; text?: string }) => (block.type === 'text' ? block.text : `[${block.type} content]`)).join('\n');
}

/**
 * Asks the client's model to answer `prompt` (`sampling/createMessage`).
 * The request is tied to the tool call (`relatedRequestId`), so a Streamable
 * HTTP transport sends it on the call's stream; it is cancelled with the call.
 * Rejects, without sending anything, when the client did not declare the
 * `sampling` capability: it could only answer "method not found".
 */
async function sampleClient(server: McpServer, extra: RequestExtra, prompt: string, maxTokens: number): Promise<{ text: string; model: string }> {
  if (server.server.getClientCapabilities()?.sampling === undefined) {
    throw new Error('The client does not support sampling (no sampling capability declared).');
  }
  const result = await server.server.createMessage(
    { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens },
    { relatedRequestId: extra.requestId, signal: extra.signal },
  );
  return { text: replyText(result.content), model: result.model };
}

/**
 * Registers the tools that request LLM sampling from the client:
 * `test_sampling` (conformance `tools-call-sampling`) and `sample`.
 * A client without sampling support gets an `isError` result (the SDK turns
 * exceptions thrown by a tool into one).
 */
export function registerSamplingTools(server: McpServer): void {
  server.registerTool(
    'test_sampling',
    {
      description: "Asks the client's LLM (sampling/createMessage) and returns its reply.",
      inputSchema: { prompt: z.string().describe('The prompt to send to the LLM') },
    },
    async ({ prompt }, extra) => {
      const reply = await sampleClient(server, extra, prompt, DEFAULT_MAX_TOKENS);
      return { content: [{ type: 'text', text: `LLM response: ${reply.text}` }] };
    },
  );

  server.registerTool(
    'sample',
    {
      description: "Sends `prompt` to the client's model (sampling/createMessage) and returns the model's text.",
      inputSchema: {
        prompt: z.string().describe('The user message to sample a reply for'),
        maxTokens: z.number().int().min(1).default(DEFAULT_MAX_TOKENS).describe('Token budget for the reply'),
      },
      outputSchema: {
        text: z.string().describe("The model's reply"),
        model: z.string().describe('The model that produced it, as reported by the client'),
      },
    },
    async ({ prompt, maxTokens }, extra) => {
      const reply = await sampleClient(server, extra, prompt, maxTokens);
      return { content: [{ type: 'text', text: reply.text }], structuredContent: reply };
    },
  );
}
