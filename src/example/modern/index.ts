/**
 * The example server for the 2026-07-28 leg, on the official SDK v2: every tool of the
 * 2025-era example, from the same table (`../tools`, adapted in `tools.ts`), and the
 * resources and prompts the modern conformance scenarios call, plus the multi-round-trip
 * ones (`input-required.ts`) and the diagnostic hooks of `server-stateless`.
 * `createExampleHandler` serves it with `createMcpHandler`, strict (`legacy: 'reject'`):
 * 2025-era traffic is the continuity endpoint's.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import {
  InMemoryServerEventBus,
  McpServer,
  ResourceTemplate,
  completable,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type McpHttpHandler,
  type RequestStateCodec,
  type ServerEventBus,
} from '@modelcontextprotocol/server';
import { modernIdentity } from '../../server/index.js';
import { z } from 'zod';
import { PIXEL_PNG_BASE64, PNG_MIME_TYPE } from '../media.js';
import { WATCHED_RESOURCE_URI } from '../resources.js';
import { exampleTools, toolState, type ToolState } from '../tools/index.js';
import { registerInputRequired, type FlowState } from './input-required.js';
import { registerModernTool } from './tools.js';

/** Options of {@link createExampleHandler}. */
export interface ModernExampleOptions {
  /**
   * Where `subscriptions/listen` streams hear of changes. Replicas share one (e.g. the
   * Redis store's `serverEventBus()`); default: this process only.
   */
  bus?: ServerEventBus | undefined;
  /**
   * HMAC key sealing `requestState` (≥ 32 bytes). Every replica that may receive a
   * later round must hold the same key; default: a random key of this process.
   */
  requestStateKey?: Uint8Array | string | undefined;
  /** Out-of-band errors of the SDK handler. */
  onError?: ((error: Error) => void) | undefined;
}

const STEP_DELAY_MS = 50;
const ARG1_SUGGESTIONS = ['paris', 'park', 'party', 'test', 'testValue1', 'testValue2'];
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/**
 * Whom a `requestState` is bound to: the principal the host authenticated, where there is
 * one; else the credential the request presented (`serve` verifies none, but a state then
 * needs the same `Authorization` to be replayed); else nobody. `clientInfo` is not part of
 * it: the client asserts it, so anyone replaying a state could assert the same.
 */
export function requestStateBinding(request: Request | undefined): string {
  const { principal } = modernIdentity(request);
  if (principal !== undefined) return `principal:${principal}`;
  const authorization = request?.headers.get('authorization');
  return authorization ? `authorization:${authorization}` : 'anonymous';
}

/** The modern leg of `serve`: `createMcpHandler` over a fresh example server per request. */
export function createExampleHandler(options: ModernExampleOptions = {}): McpHttpHandler {
  const bus = options.bus ?? new InMemoryServerEventBus(options.onError);
  const key = options.requestStateKey ?? randomBytes(32);
  // A server per request, one tool state per handler: tally's runs and the watched
  // resource's revision are the process's here, as there is no session to keep them.
  const state = toolState();
  return createMcpHandler(
    (context) => {
      // One codec per request: its binding is this request's, and the codec's bind callback
      // sees only the SDK context. The method is bound too: a state minted by tools/call is
      // not accepted by prompts/get. The codec keeps the HMAC tag, never the raw value.
      const binding = requestStateBinding(context.requestInfo);
      const codec = createRequestStateCodec<FlowState>({ key, bind: (ctx) => `${ctx.mcpReq.method}\0${binding}` });
      return createModernExampleServer(bus, codec, state);
    },
    {
      legacy: 'reject',
      bus,
      ...(options.onError ? { onerror: options.onError } : {}),
    },
  );
}

/** A fresh modern example server (one per request under `createMcpHandler`). */
export function createModernExampleServer(bus: ServerEventBus, codec: RequestStateCodec<FlowState>, state: ToolState = toolState()): McpServer {
  // resources.subscribe: a listen may name resources (the watched one changes); without it
  // the SDK acknowledges a listen without its resourceSubscriptions.
  const server = new McpServer(
    { name: 'mcp-continuity-example', version: '1.0.0' },
    { capabilities: { logging: {}, resources: { subscribe: true } }, requestState: { verify: (state, ctx) => codec.verify(state, ctx) } },
  );
  for (const tool of exampleTools(state)) registerModernTool(server, bus, tool);
  registerDiagnostics(server, bus);
  registerResources(server, state);
  registerPrompts(server);
  registerInputRequired(server, codec);
  return server;
}

/** The modern-only tools the conformance scenarios call beside the shared table. */
function registerDiagnostics(server: McpServer, bus: ServerEventBus): void {
  server.registerTool('test_logging_tool', { description: 'Logs three info messages (at the requested log level).' }, async (ctx) => {
    for (const [index, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
      if (index > 0) await sleep(STEP_DELAY_MS, undefined, { signal: ctx.mcpReq.signal });
      await ctx.mcpReq.log('info', message, 'example');
    }
    return text('Tool with logging executed successfully');
  });
  server.registerTool('test_trigger_tool_change', { description: 'Announces a tools/list change to every listening client.' }, () => {
    bus.publish({ kind: 'tools_list_changed' });
    return text('tools/list_changed published');
  });
  server.registerTool('test_trigger_prompt_change', { description: 'Announces a prompts/list change to every listening client.' }, () => {
    bus.publish({ kind: 'prompts_list_changed' });
    return text('prompts/list_changed published');
  });
  // An input request the client did not declare the capability for is refused by the SDK
  // with MissingRequiredClientCapabilityError (-32021): a thrown tool error would be a result.
  server.registerTool('test_missing_capability', { description: 'Needs the client to declare sampling.' }, (ctx) => {
    if (inputResponse(ctx.mcpReq.inputResponses, 'probe').kind === 'sampling') return text('the client can sample');
    return inputRequired({
      inputRequests: { probe: inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'ping' } }], maxTokens: 5 }) },
    });
  });
  server.registerTool('test_streaming_elicitation', { description: 'Asks for a name in its result (never as a request on the stream).' }, (ctx) => {
    const view = inputResponse(ctx.mcpReq.inputResponses, 'user_name');
    if (view.kind !== 'elicit') {
      return inputRequired({
        inputRequests: { user_name: inputRequired.elicit({ message: 'What is your name?', requestedSchema: z.object({ name: z.string() }) }) },
      });
    }
    return text(`elicitation ${view.action}`);
  });
}

function registerResources(server: McpServer, state: ToolState): void {
  server.registerResource('static-text', 'test://static-text', { description: 'A fixed plain-text resource.', mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
  }));
  server.registerResource('static-binary', 'test://static-binary', { description: 'A 1×1 PNG.', mimeType: PNG_MIME_TYPE }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: PNG_MIME_TYPE, blob: PIXEL_PNG_BASE64 }],
  }));
  // Its changes (update_watched_resource) reach the subscriptions/listen streams that name it.
  server.registerResource(
    'watched-resource',
    WATCHED_RESOURCE_URI,
    { description: 'A resource that changes when update_watched_resource is called; listen to hear about it.', mimeType: 'text/plain' },
    (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: `Watched resource, revision ${state.watched.revision}.` }] }),
  );
  server.registerResource(
    'template-data',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { description: 'JSON data for any {id}.', mimeType: 'application/json' },
    (uri, variables) => {
      const raw = variables['id'];
      const id = Array.isArray(raw) ? raw.join(',') : (raw ?? '');
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] };
    },
  );
}

function registerPrompts(server: McpServer): void {
  server.registerPrompt('test_simple_prompt', { description: 'A prompt without arguments.' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
  }));
  const suggest = (prefix: string) => ARG1_SUGGESTIONS.filter((v) => v.toLowerCase().startsWith(prefix.toLowerCase()));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      description: 'Substitutes two arguments; arg1 supports completion.',
      argsSchema: z.object({ arg1: completable(z.string().describe('First test argument'), suggest), arg2: z.string().describe('Second test argument') }),
    },
    ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    { description: 'Embeds a text resource under the given URI.', argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }) },
    ({ resourceUri }) => ({
      messages: [
        { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
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
