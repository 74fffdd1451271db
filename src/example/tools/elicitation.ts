import * as z from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ElicitRequestFormParams, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { RequestExtra } from '../logging.js';

type RequestedSchema = ElicitRequestFormParams['requestedSchema'];

/** Form for `test_elicitation` (conformance `tools-call-elicitation`). */
const CONTACT_FORM: RequestedSchema = {
  type: 'object',
  properties: {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  },
  required: ['username', 'email'],
};

/** SEP-1034: one field per primitive type, each with a default. */
const DEFAULTS_FORM: RequestedSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Full name', default: 'John Doe' },
    age: { type: 'integer', description: 'Age in years', default: 30 },
    score: { type: 'number', description: 'Test score', default: 95.5 },
    status: {
      type: 'string',
      description: 'Account status',
      enum: ['active', 'inactive', 'pending'],
      default: 'active',
    },
    verified: { type: 'boolean', description: 'Whether the account is verified', default: true },
  },
};

/** SEP-1330: the five enum shapes (single/multi select, titled/untitled, legacy enumNames). */
const ENUMS_FORM: RequestedSchema = {
  type: 'object',
  properties: {
    untitledSingle: {
      type: 'string',
      description: 'Untitled single-select',
      enum: ['option1', 'option2', 'option3'],
    },
    titledSingle: {
      type: 'string',
      description: 'Titled single-select',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Legacy titled enum (deprecated enumNames)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Untitled multi-select',
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Titled multi-select',
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
};

/** Form for `elicit`: a single free-text answer. */
const ANSWER_FORM: RequestedSchema = {
  type: 'object',
  properties: { answer: { type: 'string', description: 'Your answer' } },
  required: ['answer'],
};

/**
 * Asks the user, through the client, to fill `requestedSchema` (`elicitation/create`,
 * form mode). Tied to the tool call like sampling. Rejects without asking when
 * the client lacks the `elicitation` capability, and when its answer violates
 * the schema (the SDK validates accepted content).
 */
async function elicitForm(server: McpServer, extra: RequestExtra, message: string, requestedSchema: RequestedSchema): Promise<ElicitResult> {
  if (server.server.getClientCapabilities()?.elicitation === undefined) {
    throw new Error('The client does not support elicitation (no elicitation capability declared).');
  }
  return server.server.elicitInput({ mode: 'form', message, requestedSchema }, { relatedRequestId: extra.requestId, signal: extra.signal });
}

/** `action=<accept|decline|cancel>, content={...}` as the SEP scenarios describe it. */
function summarize(result: ElicitResult): string {
  return `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

/**
 * Registers the tools that request user input from the client:
 * `test_elicitation`, `test_elicitation_sep1034_defaults`,
 * `test_elicitation_sep1330_enums` (conformance) and `elicit`.
 */
export function registerElicitationTools(server: McpServer): void {
  server.registerTool(
    'test_elicitation',
    {
      description: 'Asks the user for a username and email (elicitation/create) and returns the answer.',
      inputSchema: { message: z.string().describe('The message to show the user') },
    },
    async ({ message }, extra) => {
      const result = await elicitForm(server, extra, message, CONTACT_FORM);
      return { content: [{ type: 'text', text: `User response: ${summarize(result)}` }] };
    },
  );

  server.registerTool(
    'test_elicitation_sep1034_defaults',
    { description: 'Elicits a form whose string, integer, number, enum and boolean fields all have defaults (SEP-1034).' },
    async (extra) => {
      const result = await elicitForm(server, extra, 'Please review and update the form fields with defaults', DEFAULTS_FORM);
      return { content: [{ type: 'text', text: `Elicitation completed: ${summarize(result)}` }] };
    },
  );

  server.registerTool('test_elicitation_sep1330_enums', { description: 'Elicits a form using every enum schema variant of SEP-1330.' }, async (extra) => {
    const result = await elicitForm(server, extra, 'Please select options from the enum fields', ENUMS_FORM);
    return { content: [{ type: 'text', text: `Elicitation completed: ${summarize(result)}` }] };
  });

  server.registerTool(
    'elicit',
    {
      description: 'Shows `message` to the user (elicitation/create) and returns their answer and action.',
      inputSchema: { message: z.string().describe('The question to ask the user') },
      outputSchema: {
        action: z.enum(['accept', 'decline', 'cancel']).describe("The user's decision"),
        answer: z.string().optional().describe('The answer, when the user accepted'),
      },
    },
    async ({ message }, extra) => {
      const result = await elicitForm(server, extra, message, ANSWER_FORM);
      const answer = result.action === 'accept' ? result.content?.['answer'] : undefined;
      const structured = typeof answer === 'string' ? { action: result.action, answer } : { action: result.action };
      return {
        content: [{ type: 'text', text: typeof answer === 'string' ? answer : `(${result.action})` }],
        structuredContent: structured,
      };
    },
  );
}
