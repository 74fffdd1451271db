import * as z from 'zod';
import { defineTool, type ExampleTool, type SampleAnswer, type ToolContext } from './table.js';

/** Token budget the conformance scenario expects in the sampling request. */
const DEFAULT_MAX_TOKENS = 100;

/** Text of a sampling reply; non-text blocks are named rather than dropped. */
function replyText(content: SampleAnswer['content']): string {
  const blocks = Array.isArray(content) ? content : [content];
  return blocks.map((block) => (block.type === 'text' ? (block.text ?? '') : `[${block.type} content]`)).join('\n');
}

/**
 * Asks the client's model to answer `prompt` (`sampling/createMessage`): on the 2025-era
 * leg a request tied to the tool call, refused without sending anything when the client
 * did not declare `sampling`; on the stateless leg an `input_required` round.
 */
async function sampleClient(ctx: ToolContext, prompt: string, maxTokens: number): Promise<{ text: string; model: string }> {
  const result = await ctx.ask('sample', { kind: 'sample', messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens });
  return { text: replyText(result.content), model: result.model };
}

/**
 * The tools that request LLM sampling from the client:
 * `test_sampling` (conformance `tools-call-sampling`) and `sample`.
 * A client without sampling support gets an `isError` result on the 2025-era leg (the SDK
 * turns exceptions thrown by a tool into one), and -32021 on the stateless leg (the SDK's).
 */
export const samplingTools: readonly ExampleTool[] = [
  defineTool({
    name: 'test_sampling',
    description: "Asks the client's LLM (sampling/createMessage) and returns its reply.",
    inputSchema: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
    async run({ prompt }, ctx) {
      const reply = await sampleClient(ctx, prompt, DEFAULT_MAX_TOKENS);
      return { content: [{ type: 'text', text: `LLM response: ${reply.text}` }] };
    },
  }),
  defineTool({
    name: 'sample',
    description: "Sends `prompt` to the client's model (sampling/createMessage) and returns the model's text.",
    inputSchema: z.object({
      prompt: z.string().describe('The user message to sample a reply for'),
      maxTokens: z.number().int().min(1).default(DEFAULT_MAX_TOKENS).describe('Token budget for the reply'),
    }),
    outputSchema: z.object({
      text: z.string().describe("The model's reply"),
      model: z.string().describe('The model that produced it, as reported by the client'),
    }),
    async run({ prompt, maxTokens }, ctx) {
      const reply = await sampleClient(ctx, prompt, maxTokens);
      return { content: [{ type: 'text', text: reply.text }], structuredContent: reply };
    },
  }),
];
