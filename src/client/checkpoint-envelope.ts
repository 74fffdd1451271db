/**
 * A checkpoint as stored text: a versioned envelope, optionally authenticated with an
 * HMAC-SHA-256 keyed by the application, and read with bounded cost whatever its size.
 * WebCrypto only (no `node:` import), so a browser store can use it too.
 */
import { sessionCheckpointProblem, type SessionCheckpoint } from './checkpoint.js';
import { MAX_UNFINISHED, MAX_UNFINISHED_PARAMS_BYTES, salvageUnfinished, type UnfinishedRequest } from './unfinished.js';

const FORMAT = 'mcp-continuity/checkpoint';
const VERSION = 1;
/** Shortest key accepted, bytes: a MAC is no stronger than its key. */
export const MIN_KEY_BYTES = 16;

/** Why a stored checkpoint was refused: the part that is wrong, and the calls in flight it still lists. */
export interface EnvelopeProblem {
  part: string;
  cause?: unknown;
  unfinished: UnfinishedRequest[];
}

/** The key of an envelope's MAC: imported once, used for every save and load. */
export type MacKey = Promise<CryptoKey>;

/** `key` (the store's `key` option) as an HMAC key; a TypeError names a bad one. */
export function macKey(key: string | Uint8Array): MacKey {
  const bytes = typeof key === 'string' ? new TextEncoder().encode(key) : key;
  if (!(bytes instanceof Uint8Array) || bytes.length < MIN_KEY_BYTES) {
    throw new TypeError(`key must be a string or Uint8Array of at least ${MIN_KEY_BYTES} bytes`);
  }
  // A copy: the caller may reuse its buffer.
  return globalThis.crypto.subtle.importKey('raw', new Uint8Array(bytes), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/**
 * Most arrays and objects a stored checkpoint may hold before it is parsed: what a valid
 * one can reach (every unfinished request's params nested to their byte bound, every
 * stream), so that a file of millions of tiny values is refused without materializing them.
 */
export function maxContainers(maxStreams: number): number {
  return MAX_UNFINISHED * (MAX_UNFINISHED_PARAMS_BYTES / 2) + 2 * maxStreams + 16;
}

/** The envelope's text for `checkpoint` (already validated), with a MAC when keyed. */
export async function encodeEnvelope(checkpoint: SessionCheckpoint, key: MacKey | undefined): Promise<string> {
  const body = JSON.stringify(checkpoint);
  const mac = key === undefined ? undefined : await sign(await key, body);
  // The checkpoint's JSON goes in verbatim: the MAC covers exactly these characters.
  const head = JSON.stringify({ format: FORMAT, version: VERSION, ...(mac === undefined ? {} : { mac }) });
  return `${head.slice(0, -1)},"checkpoint":${body}}\n`;
}

/**
 * The checkpoint in `text`, or why it is refused. Structures are counted before anything is
 * parsed (at most `containers`); with a key, the MAC is checked before the content is looked
 * at, and a checkpoint failing it yields nothing, not even its calls in flight.
 */
export async function decodeEnvelope(text: string, key: MacKey | undefined, containers: number): Promise<SessionCheckpoint | EnvelopeProblem> {
  if (countContainers(text, containers) > containers) return { part: 'too-many-values', unfinished: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    return { part: 'json', cause, unfinished: [] };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { part: 'envelope', unfinished: [] };
  const envelope = parsed as Record<string, unknown>;
  if (envelope.format !== FORMAT) return { part: 'format', unfinished: [] };
  if (envelope.version !== VERSION) return { part: 'version', unfinished: [] };
  // JSON.stringify of parsed JSON gives back what JSON.stringify wrote: the signed characters.
  if (key !== undefined && !(typeof envelope.mac === 'string' && (await verify(await key, envelope.mac, JSON.stringify(envelope.checkpoint))))) {
    return { part: 'mac', unfinished: [] };
  }
  const problem = sessionCheckpointProblem(envelope.checkpoint);
  if (problem === undefined) return envelope.checkpoint as SessionCheckpoint;
  const inFlight =
    typeof envelope.checkpoint === 'object' && envelope.checkpoint !== null ? (envelope.checkpoint as { inFlight?: unknown }).inFlight : undefined;
  return { part: problem, unfinished: salvageUnfinished(inFlight) };
}

/** Is `value` an {@link EnvelopeProblem} (not a checkpoint)? */
export function isEnvelopeProblem(value: SessionCheckpoint | EnvelopeProblem): value is EnvelopeProblem {
  return 'part' in value && Array.isArray((value as Partial<EnvelopeProblem>).unfinished);
}

/** Arrays and objects in JSON `text` (brackets outside strings), counting stops past `limit`. */
function countContainers(text: string, limit: number): number {
  let count = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if ((c === 0x7b || c === 0x5b) && ++count > limit) return count;
  }
  return count;
}

const encoder = new TextEncoder();

async function sign(key: CryptoKey, body: string): Promise<string> {
  const mac = new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, encoder.encode(macInput(body))));
  return btoa(String.fromCharCode(...mac))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

async function verify(key: CryptoKey, mac: string, body: string): Promise<boolean> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(mac)) return false;
  const bytes = Uint8Array.from(atob(`${mac.replace(/-/g, '+').replace(/_/g, '/')}=`), (c) => c.charCodeAt(0));
  // WebCrypto's verify compares in constant time.
  return globalThis.crypto.subtle.verify('HMAC', key, bytes, encoder.encode(macInput(body)));
}

/** The MAC covers the format and version too: a checkpoint signed for one cannot pass as another. */
function macInput(body: string): string {
  return `${FORMAT}/${VERSION}\n${body}`;
}
