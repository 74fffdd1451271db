import * as z from 'zod';
import { defineTool, type ElicitAnswer, type ElicitAsk, type ExampleTool, type ToolContext } from './table.js';

type RequestedSchema = ElicitAsk['requestedSchema'];

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
 * form mode): on the 2025-era leg a request tied to the tool call, refused without asking
 * when the client lacks the `elicitation` capability; on the stateless leg an
 * `input_required` round.
 */
function elicitForm(ctx: ToolContext, message: string, requestedSchema: RequestedSchema): Promise<ElicitAnswer> {
  return ctx.ask('form', { kind: 'elicit', message, requestedSchema });
}

/** `action=<accept|decline|cancel>, content={...}` as the SEP scenarios describe it. */
function summarize(result: ElicitAnswer): string {
  return `action=${result.action}, content=${JSON.stringify(result.content ?? {})}`;
}

/**
 * The tools that request user input from the client:
 * `test_elicitation`, `test_elicitation_sep1034_defaults`,
 * `test_elicitation_sep1330_enums` (conformance) and `elicit`.
 */
export const elicitationTools: readonly ExampleTool[] = [
  defineTool({
    name: 'test_elicitation',
    description: 'Asks the user for a username and email (elicitation/create) and returns the answer.',
    inputSchema: z.object({ message: z.string().describe('The message to show the user') }),
    async run({ message }, ctx) {
      const result = await elicitForm(ctx, message, CONTACT_FORM);
      return { content: [{ type: 'text', text: `User response: ${summarize(result)}` }] };
    },
  }),
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicits a form whose string, integer, number, enum and boolean fields all have defaults (SEP-1034).',
    async run(_args, ctx) {
      const result = await elicitForm(ctx, 'Please review and update the form fields with defaults', DEFAULTS_FORM);
      return { content: [{ type: 'text', text: `Elicitation completed: ${summarize(result)}` }] };
    },
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicits a form using every enum schema variant of SEP-1330.',
    async run(_args, ctx) {
      const result = await elicitForm(ctx, 'Please select options from the enum fields', ENUMS_FORM);
      return { content: [{ type: 'text', text: `Elicitation completed: ${summarize(result)}` }] };
    },
  },
  defineTool({
    name: 'elicit',
    description: 'Shows `message` to the user (elicitation/create) and returns their answer and action.',
    inputSchema: z.object({ message: z.string().describe('The question to ask the user') }),
    outputSchema: z.object({
      action: z.enum(['accept', 'decline', 'cancel']).describe("The user's decision"),
      answer: z.string().optional().describe('The answer, when the user accepted'),
    }),
    async run({ message }, ctx) {
      const result = await elicitForm(ctx, message, ANSWER_FORM);
      const answer = result.action === 'accept' ? result.content?.['answer'] : undefined;
      const structured = typeof answer === 'string' ? { action: result.action, answer } : { action: result.action };
      return {
        content: [{ type: 'text', text: typeof answer === 'string' ? answer : `(${result.action})` }],
        structuredContent: structured,
      };
    },
  }),
];
