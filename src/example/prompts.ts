import * as z from 'zod';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PIXEL_PNG_BASE64, PNG_MIME_TYPE } from './media.js';

/** Values offered by `completion/complete` for `arg1` of `test_prompt_with_arguments`. */
const ARG1_SUGGESTIONS = ['paris', 'park', 'party', 'test', 'testValue1', 'testValue2'];

/** Suggestions starting with `prefix`, case-insensitively, in list order. */
function suggest(prefix: string): string[] {
  const wanted = prefix.toLowerCase();
  return ARG1_SUGGESTIONS.filter((value) => value.toLowerCase().startsWith(wanted));
}

/**
 * Registers the example's prompts (conformance `prompts-*` scenarios):
 * `test_simple_prompt`, `test_prompt_with_arguments` (whose `arg1` also feeds
 * `completion/complete`), `test_prompt_with_embedded_resource` and
 * `test_prompt_with_image`.
 */
export function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments.' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));

  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'A prompt that substitutes two arguments; arg1 supports completion.',
      argsSchema: {
        arg1: completable(z.string().describe('First test argument'), suggest),
        arg2: z.string().describe('Second test argument'),
      },
    },
    ({ arg1, arg2 }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
    }),
  );

  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      description: 'A prompt that embeds a text resource under the given URI.',
      argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') },
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
      ],
    }),
  );

  server.registerPrompt('test_prompt_with_image', { description: 'A prompt that carries an image.' }, () => ({
    messages: [
      { role: 'user', content: { type: 'image', data: PIXEL_PNG_BASE64, mimeType: PNG_MIME_TYPE } },
      { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
    ],
  }));
}
