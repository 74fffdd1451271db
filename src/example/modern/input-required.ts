/**
 * The example's multi-round-trip tools and prompt (2026-07-28, `input_required` results),
 * named and shaped as the conformance suite's `input-required-result-*` scenarios ask.
 * A round that lacks a usable answer is asked again, never failed: the client may have
 * sent the wrong keys or shapes. `requestState` is sealed by the server's codec (HMAC) and
 * bound to whoever received it (see `createExampleHandler`): a tampered one, or one echoed
 * under another principal, never reaches these handlers.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  acceptedContent,
  inputRequired,
  inputResponse,
  type McpServer,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

/** The state these tools seal into `requestState`. */
export interface FlowState {
  readonly tool: string;
  readonly round: number;
  readonly name?: string;
}

const NAME = z.object({ name: z.string() });
const CONFIRM = z.object({ ok: z.boolean() });
const COLOR = z.object({ color: z.string() });
const CONTEXT = z.object({ context: z.string() });

const askName = (message: string) => inputRequired.elicit({ message, requestedSchema: NAME });
const askCapital = () =>
  inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 });
const askGreeting = () => inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 });

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** The state of this round, when it is ours and for this tool (the codec verified it). */
function stateOf(ctx: ServerContext, tool: string): FlowState | undefined {
  const state = ctx.mcpReq.requestState<FlowState>();
  return state !== undefined && typeof state === 'object' && state.tool === tool ? state : undefined;
}

function samplingText(ctx: ServerContext, key: string): string | undefined {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  if (view.kind !== 'sampling') return undefined;
  const content = view.result.content;
  const first = Array.isArray(content) ? content[0] : content;
  return first?.type === 'text' ? first.text : '';
}

function rootsOf(ctx: ServerContext, key: string): string[] | undefined {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  return view.kind === 'roots' ? view.roots.map((r) => r.uri) : undefined;
}

/** Registers the multi-round-trip tools and the `test_input_required_result_prompt` prompt. */
export function registerInputRequired(server: McpServer, codec: RequestStateCodec<FlowState>): void {
  // The order of registration is the order of tools/list.
  registerOneRoundTools(server);
  registerSealedStateTools(server, codec);
  registerCapabilitiesTool(server);
  registerInputRequiredPrompt(server);
}

/** The tools that ask one thing (elicitation, sampling, roots) and answer once it comes. */
function registerOneRoundTools(server: McpServer): void {
  server.registerTool('test_input_required_result_elicitation', { description: 'Asks for a name (elicitation), then greets.' }, (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', NAME);
    if (!answer) return inputRequired({ inputRequests: { user_name: askName('What is your name?') } });
    return text(`Hello, ${answer.name}!`);
  });

  server.registerTool('test_input_required_result_sampling', { description: 'Asks the model a question (sampling), then reports its answer.' }, (ctx) => {
    const answer = samplingText(ctx, 'capital_question');
    if (answer === undefined) return inputRequired({ inputRequests: { capital_question: askCapital() } });
    return text(`The model answered: ${answer}`);
  });

  server.registerTool('test_input_required_result_list_roots', { description: 'Asks for the client roots, then lists them.' }, (ctx) => {
    const roots = rootsOf(ctx, 'client_roots');
    if (roots === undefined) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
    return text(`Client roots: ${roots.join(', ')}`);
  });
}

/** The tools that carry sealed `requestState` between rounds and check it is theirs. */
function registerSealedStateTools(server: McpServer, codec: RequestStateCodec<FlowState>): void {
  const stateTool = 'test_input_required_result_request_state';
  server.registerTool(stateTool, { description: 'Asks for a confirmation with sealed requestState; reports state-ok.' }, async (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', CONFIRM);
    if (!answer || !stateOf(ctx, stateTool)) {
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: CONFIRM }) },
        requestState: await codec.mint({ tool: stateTool, round: 1 }, ctx),
      });
    }
    return text(`state-ok: confirmed=${answer.ok}`);
  });

  const multiTool = 'test_input_required_result_multiple_inputs';
  server.registerTool(multiTool, { description: 'Asks for a name, a greeting and the roots at once.' }, async (ctx) => {
    const name = acceptedContent(ctx.mcpReq.inputResponses, 'user_name', NAME);
    const greeting = samplingText(ctx, 'greeting');
    const roots = rootsOf(ctx, 'client_roots');
    if (!name || greeting === undefined || roots === undefined || !stateOf(ctx, multiTool)) {
      return inputRequired({
        inputRequests: { user_name: askName('What is your name?'), greeting: askGreeting(), client_roots: inputRequired.listRoots() },
        requestState: await codec.mint({ tool: multiTool, round: 1 }, ctx),
      });
    }
    return text(`${greeting} ${name.name}; roots: ${roots.join(', ')}`);
  });

  const roundsTool = 'test_input_required_result_multi_round';
  server.registerTool(roundsTool, { description: 'Asks for a name, then a colour, over two rounds.' }, async (ctx) => {
    const state = stateOf(ctx, roundsTool);
    const color = state?.round === 2 ? acceptedContent(ctx.mcpReq.inputResponses, 'step2', COLOR) : undefined;
    if (state?.round === 2 && color) return text(`${state.name ?? ''} likes ${color.color}`);
    const name = state?.round === 1 ? acceptedContent(ctx.mcpReq.inputResponses, 'step1', NAME) : undefined;
    if (state?.round === 2 || name) {
      const who = name?.name ?? state?.name ?? '';
      return inputRequired({
        inputRequests: { step2: inputRequired.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema: COLOR }) },
        requestState: await codec.mint({ tool: roundsTool, round: 2, name: who }, ctx),
      });
    }
    return inputRequired({
      inputRequests: { step1: askName('Step 1: What is your name?') },
      requestState: await codec.mint({ tool: roundsTool, round: 1 }, ctx),
    });
  });

  const tamperTool = 'test_input_required_result_tampered_state';
  server.registerTool(tamperTool, { description: 'Seals its requestState; a tampered one is refused (-32602).' }, async (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'confirm', CONFIRM);
    if (!answer || !stateOf(ctx, tamperTool)) {
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: CONFIRM }) },
        requestState: await codec.mint({ tool: tamperTool, round: 1 }, ctx),
      });
    }
    return text('state verified');
  });
}

/** The tool that asks only for what the client declared it can answer. */
function registerCapabilitiesTool(server: McpServer): void {
  server.registerTool('test_input_required_result_capabilities', { description: 'Asks only for what the client declared it can answer.' }, (ctx) => {
    const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
    const declared = (envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? {}) as Record<string, unknown>;
    const requests: Record<string, ReturnType<typeof askCapital>> = {};
    if (declared['sampling'] !== undefined) requests['capital_question'] = askCapital();
    if (declared['elicitation'] !== undefined) requests['user_name'] = askName('What is your name?');
    if (declared['roots'] !== undefined) requests['client_roots'] = inputRequired.listRoots();
    const answered = Object.keys(requests).some((key) => inputResponse(ctx.mcpReq.inputResponses, key).kind !== 'missing');
    if (Object.keys(requests).length === 0 || answered) return text('done with the declared capabilities');
    return inputRequired({ inputRequests: requests });
  });
}

/** The prompt that asks for context (elicitation) before it is built. */
function registerInputRequiredPrompt(server: McpServer): void {
  server.registerPrompt('test_input_required_result_prompt', { description: 'Asks for context (elicitation), then builds the prompt.' }, (ctx) => {
    const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_context', CONTEXT);
    if (!answer) {
      return inputRequired({
        inputRequests: { user_context: inputRequired.elicit({ message: 'What context should the prompt use?', requestedSchema: CONTEXT }) },
      });
    }
    return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${answer.context}` } }] };
  });
}
