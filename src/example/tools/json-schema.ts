import * as z from 'zod';
import type { ExampleTool } from './table.js';

const DIALECT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** The `$defs/address` sub-schema, as advertised on the wire. */
const ADDRESS_JSON_SCHEMA = {
  type: 'object',
  properties: { street: { type: 'string' }, city: { type: 'string' } },
};

/**
 * Input schema for `json_schema_2020_12_tool` (SEP-1613).
 *
 * SDK v1 only takes Zod schemas and converts them itself (draft-07 flavour,
 * inlining everything), so the 2020-12 keywords are supplied as Zod metadata,
 * which the converter merges verbatim. `address` is `unknown` piped into the
 * real object schema: on the wire (input side) it is just the `$ref`, while
 * calls are still validated against the object shape.
 */
function jsonSchema2020Input() {
  const address = z.object({ street: z.string().optional(), city: z.string().optional() });
  return z
    .strictObject({
      name: z.string().optional(),
      address: z.unknown().pipe(address).optional().meta({ $ref: '#/$defs/address' }),
    })
    .meta({ $schema: DIALECT_2020_12, $defs: { address: ADDRESS_JSON_SCHEMA } });
}

/**
 * `json_schema_2020_12_tool`, whose listed input schema carries `$schema`, `$defs` and
 * `additionalProperties: false` (conformance `json-schema-2020-12`).
 */
export const jsonSchemaTool: ExampleTool = {
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features ($schema, $defs, additionalProperties)',
  inputSchema: jsonSchema2020Input(),
  run: (args) => ({ content: [{ type: 'text', text: `Received: ${JSON.stringify(args)}` }] }),
};
