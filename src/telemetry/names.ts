/**
 * What a client sends never becomes a metric attribute as it is: a method outside MCP's
 * own, or a tool or prompt the server does not have, is recorded as `_OTHER`, and every
 * name is cut to {@link MAX_NAME_LENGTH}. Each series then comes from a set the server
 * controls, so no client can grow a scrape (or crash its serializer) by inventing names.
 */
import { instruments } from './meter.js';

/** The value every name outside the known set collapses into (the conventions' own spelling for it). */
export const OTHER = '_OTHER';

/** Longest name kept in an attribute or a span name; longer ones are cut and counted. */
export const MAX_NAME_LENGTH = 128;

/** Most names learned from one session's list responses (a server lists what it has; a bound all the same). */
const MAX_LEARNED = 1000;

/** The methods of the MCP revisions this package speaks (requests and notifications, both directions). */
const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'sampling/createMessage',
  'elicitation/create',
  'roots/list',
  'tasks/get',
  'tasks/result',
  'tasks/list',
  'tasks/cancel',
  'server/discover',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/message',
  'notifications/roots/list_changed',
  'notifications/resources/list_changed',
  'notifications/resources/updated',
  'notifications/tools/list_changed',
  'notifications/prompts/list_changed',
  'notifications/elicitation/complete',
  'notifications/tasks/status',
]);

/** `value` cut to {@link MAX_NAME_LENGTH}; a cut is counted under the attribute it was for. */
export function cut(value: string, attribute: string): string {
  if (value.length <= MAX_NAME_LENGTH) return value;
  instruments().cutNames.add(1, { 'mcp_continuity.attribute': attribute });
  return value.slice(0, MAX_NAME_LENGTH);
}

/** `method` if it is one of MCP's, else {@link OTHER}. */
export function knownMethod(method: string): string {
  return MCP_METHODS.has(method) ? method : OTHER;
}

/** The part of an SDK `McpServer` (v1 and v2) that holds its registered tools and prompts, keyed by name. */
interface Registries {
  _registeredTools?: unknown;
  _registeredPrompts?: unknown;
}

/**
 * The tools and prompts one session's server has: read from the SDK `McpServer`'s registries
 * (live: a tool added later counts), and learned from the server's own `tools/list` and
 * `prompts/list` answers (a low-level `Server` has no registry).
 */
export class KnownNames {
  #registries: Registries | undefined;
  readonly #learned = { tool: new Set<string>(), prompt: new Set<string>() };

  /** Reads the registries of `server`, when it has them. */
  useServer(server: unknown): void {
    if (typeof server === 'object' && server !== null) this.#registries = server;
  }

  /** Learns the names a list response of this server carried. */
  learn(kind: 'tool' | 'prompt', result: unknown): void {
    const list = (result as { tools?: unknown; prompts?: unknown } | undefined)?.[kind === 'tool' ? 'tools' : 'prompts'];
    if (!Array.isArray(list)) return;
    const into = this.#learned[kind];
    for (const item of list) {
      const name = (item as { name?: unknown } | null)?.name;
      if (typeof name === 'string' && into.size < MAX_LEARNED) into.add(name);
    }
  }

  has(kind: 'tool' | 'prompt', name: string): boolean {
    if (this.#learned[kind].has(name)) return true;
    const registry = kind === 'tool' ? this.#registries?._registeredTools : this.#registries?._registeredPrompts;
    return typeof registry === 'object' && registry !== null && Object.hasOwn(registry, name);
  }
}
