import * as z from 'zod';
import type { ExampleTool } from './table.js';

const DIALECT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

/** The `$defs/address` sub-schema, as advertised on the wire (`$anchor`: SEP-2106). */
const ADDRESS_JSON_SCHEMA = {
  $anchor: 'address',
  type: 'object',
  properties: { street: { type: 'string' }, city: { type: 'string' } },
};

/**
 * The composition (`allOf`/`anyOf`) and conditional (`if`/`then`/`else`) keywords the
 * 2026-07-28 scenario looks for (SEP-2106). Each holds for every value the Zod schema
 * accepts, so what is advertised never refuses a call the server takes: an object with or
 * without a name; an address, when given, is an object, and otherwise absent.
 */
const SEP_2106_KEYWORDS = {
  allOf: [{ anyOf: [{ type: 'object', required: ['name'] }, { type: 'object' }] }],
  if: { required: ['address'] },
  then: { properties: { address: { type: 'object' } } },
  else: { not: { required: ['address'] } },
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
    .meta({ $schema: DIALECT_2020_12, $defs: { address: ADDRESS_JSON_SCHEMA }, ...SEP_2106_KEYWORDS });
}

/**
 * `json_schema_2020_12_tool`, whose listed input schema carries `$schema`, `$defs`,
 * `additionalProperties: false` (SEP-1613), and `allOf`/`anyOf`, `if`/`then`/`else` and
 * `$anchor` (SEP-2106) (conformance `json-schema-2020-12`).
 */
export const jsonSchemaTool: ExampleTool = {
  name: 'json_schema_2020_12_tool',
  description: 'Tool with JSON Schema 2020-12 features ($schema, $defs, additionalProperties)',
  inputSchema: jsonSchema2020Input(),
  run: (args) => ({ content: [{ type: 'text', text: `Received: ${JSON.stringify(args)}` }] }),
};
