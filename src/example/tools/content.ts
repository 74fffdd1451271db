import { PIXEL_PNG_BASE64, PNG_MIME_TYPE, SHORT_WAV_BASE64, WAV_MIME_TYPE } from '../media.js';
import type { ExampleTool, ToolResult } from './table.js';

const fixed = (name: string, description: string, result: () => ToolResult): ExampleTool => ({ name, description, run: result });

/**
 * The argument-less tools that each return one fixed kind of content
 * (text, image, audio, embedded resource, a mix of them, and a tool error).
 * Names and payloads follow the conformance suite's `tools-call-*` scenarios.
 */
export const contentTools: readonly ExampleTool[] = [
  fixed('test_simple_text', 'Returns a single text content block.', () => ({
    content: [{ type: 'text', text: 'This is a simple text response for testing.' }],
  })),

  fixed('test_image_content', 'Returns a single image content block (a 1×1 PNG).', () => ({
    content: [{ type: 'image', data: PIXEL_PNG_BASE64, mimeType: PNG_MIME_TYPE }],
  })),

  fixed('test_audio_content', 'Returns a single audio content block (a short WAV).', () => ({
    content: [{ type: 'audio', data: SHORT_WAV_BASE64, mimeType: WAV_MIME_TYPE }],
  })),

  fixed('test_embedded_resource', 'Returns an embedded text resource.', () => ({
    content: [
      {
        type: 'resource',
        resource: {
          uri: 'test://embedded-resource',
          mimeType: 'text/plain',
          text: 'This is an embedded resource content.',
        },
      },
    ],
  })),

  fixed('test_multiple_content_types', 'Returns text, image and embedded-resource content in one result.', () => ({
    content: [
      { type: 'text', text: 'Multiple content types test:' },
      { type: 'image', data: PIXEL_PNG_BASE64, mimeType: PNG_MIME_TYPE },
      {
        type: 'resource',
        resource: {
          uri: 'test://mixed-content-resource',
          mimeType: 'application/json',
          text: JSON.stringify({ test: 'data', value: 123 }),
        },
      },
    ],
  })),

  // A tool-level failure is a result, not a JSON-RPC error: the model gets to see it.
  fixed('test_error_handling', 'Always fails, reporting the failure as a tool result with isError: true.', () => ({
    isError: true,
    content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
  })),
];
