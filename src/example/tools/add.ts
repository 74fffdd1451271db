import * as z from 'zod';
import { defineTool, text, type ExampleTool } from './table.js';

/** `add`, the README's tool: the README's client snippet calls it on `serve` too. */
export const addTool: ExampleTool = defineTool({
  name: 'add',
  description: 'Adds two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => text(String(a + b)),
});
