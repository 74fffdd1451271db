/**
 * The example tools as one era-neutral table: name, schemas and a handler written against
 * {@link ToolContext}, not against either SDK. `registerTools` adapts the table to the SDK
 * v1 `McpServer` of the 2025-era leg; `src/example/modern` adapts the same table to the
 * SDK v2 `McpServer` of the 2026-07-28 leg. So `serve` lists the same tools on both legs,
 * and a tool is changed in one place.
 */
import type * as z from 'zod';

/** The protocol's log levels, least severe first. */
export type LogLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';

/** A content block both SDKs accept in a tool result. */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource'; resource: { uri: string; mimeType: string; text: string } };

export interface ToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** An elicitation form (`requestedSchema` as JSON Schema, the shape both eras send). */
export interface ElicitAsk {
  kind: 'elicit';
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, object>; required?: string[] };
}

/** A sampling request. */
export interface SampleAsk {
  kind: 'sample';
  messages: { role: 'user' | 'assistant'; content: { type: 'text'; text: string } }[];
  maxTokens: number;
}

export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown> | undefined;
}

export interface SampleAnswer {
  content: { type: string; text?: string } | { type: string; text?: string }[];
  model: string;
}

/**
 * What a tool may do while it runs, in either era. Where the eras differ, the adapters say
 * how; the differences that a client can see are:
 * - `log`: on the 2025-era leg, filtered by the session's `logging/setLevel`; on the
 *   stateless leg, by the log level the request's own `_meta` carries (no session to hold
 *   one), and a request that names none gets no logs (the SDK v2's rule).
 * - `ask`: on the 2025-era leg a request to the client on the call's stream; on the
 *   stateless leg the round ends with an `input_required` result, and the client's next
 *   round (with the answer) runs the tool again from the start, so a tool asks before it
 *   does anything that must not run twice.
 * - `resourceUpdated`: on the 2025-era leg, a `notifications/resources/updated` to this
 *   session if it subscribed (answers whether it did); on the stateless leg, a change event
 *   on the bus `subscriptions/listen` streams hear (answers `false`: who hears is not known here).
 * - `closeStream`: only where the transport can replay (the 2025-era leg); absent elsewhere.
 */
export interface ToolContext {
  readonly era: '2025' | '2026';
  readonly signal: AbortSignal;
  readonly progressToken: string | number | undefined;
  /** Sends a log message on the call's stream, if the level passes. */
  log(level: LogLevel, data: unknown, logger: string): Promise<void>;
  progress(progress: number, total: number): Promise<void>;
  /** Asks the client; `key` names the question across rounds on the stateless leg. */
  ask(key: string, request: ElicitAsk): Promise<ElicitAnswer>;
  ask(key: string, request: SampleAsk): Promise<SampleAnswer>;
  resourceUpdated(uri: string): Promise<boolean>;
  readonly closeStream?: (() => void) | undefined;
}

/** Arguments that fail a rule the schema cannot say (the adapters answer JSON-RPC -32602). */
export class ToolInputError extends Error {
  constructor(
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ToolInputError';
  }
}

/** One example tool. Without `inputSchema` the tool takes no arguments. */
export interface ExampleTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema?: z.ZodType<Record<string, unknown>> | undefined;
  readonly outputSchema?: z.ZodType<Record<string, unknown>> | undefined;
  run(args: Record<string, unknown>, ctx: ToolContext): ToolResult | Promise<ToolResult>;
}

/** Defines a tool whose handler sees its arguments typed by `inputSchema`. */
export function defineTool<S extends z.ZodType<Record<string, unknown>>>(tool: {
  name: string;
  description: string;
  inputSchema: S;
  outputSchema?: z.ZodType<Record<string, unknown>>;
  run(args: z.output<S>, ctx: ToolContext): ToolResult | Promise<ToolResult>;
}): ExampleTool {
  return tool;
}

export const text = (value: string): ToolResult => ({ content: [{ type: 'text', text: value }] });
