/**
 * Event-ID codec: `<epoch>.<stream>.<seq>.<chain>`.
 *
 * - `epoch`  names the generation of the session's event log (base64url, ≤ 43 chars);
 * - `stream` names the stream within the session (base64url alphabet, ≤ 32 chars);
 * - `seq`    is contiguous per stream: 1, 2, 3 … (decimal, no leading zeros); 0 names the
 *            position before a stream's first event, whose chain is the stream's seed (a
 *            cursor that resumes a stream from its start, never an event's ID);
 * - `chain`  is a truncated hash chain over the stream's payloads,
 *            `chain_n = H(chain_{n-1} ‖ payload_n)`, so a client can check that the
 *            content it is replayed continues the history it saw, not just the numbers.
 *
 * The whole ID is visible ASCII and at most {@link MAX_EVENT_ID_LENGTH} bytes, so it is
 * safe in an SSE `id:` field and in a `Last-Event-ID` header.
 */
import { ContinuityError } from './errors.js';
import { sha256b64url, sha256b64urlOfPair } from './crypto.js';

/** An event ID, decoded. */
export interface EventId {
  readonly epoch: string;
  readonly stream: string;
  readonly seq: number;
  readonly chain: string;
}

export const MAX_EVENT_ID_LENGTH = 128;
export const CHAIN_LENGTH = 16; // 96 bits of SHA-256: collisions are not a practical concern here
const MAX_EPOCH_LENGTH = 43;
const MAX_STREAM_LENGTH = 32;

const TOKEN = /^[A-Za-z0-9_-]+$/;
const SEQ = /^(?:0|[1-9][0-9]{0,15})$/;
const CHAIN = /^[A-Za-z0-9_-]{16}$/;

/** Is `s` a valid epoch token? */
export function isEpoch(s: string): boolean {
  return s.length <= MAX_EPOCH_LENGTH && TOKEN.test(s);
}

/** Is `s` a valid stream name? */
export function isStreamName(s: string): boolean {
  return s.length <= MAX_STREAM_LENGTH && TOKEN.test(s);
}

/** Encodes an event ID. Throws `event-id-invalid` for parts outside the grammar. */
export function formatEventId(id: EventId): string {
  if (!isEpoch(id.epoch)) throw invalid('epoch', id.epoch);
  if (!isStreamName(id.stream)) throw invalid('stream', id.stream);
  if (!Number.isSafeInteger(id.seq) || id.seq < 0) throw invalid('seq', String(id.seq));
  if (!CHAIN.test(id.chain)) throw invalid('chain', id.chain);
  return `${id.epoch}.${id.stream}.${id.seq}.${id.chain}`;
}

/**
 * `<epoch>.<stream>.`, validated once, for a producer that then appends `<seq>.<chain>`
 * per event from values it made itself (a positive integer and a {@link nextChain}
 * value), which need no check. Throws `event-id-invalid` like {@link formatEventId}.
 */
export function eventIdPrefix(epoch: string, stream: string): string {
  if (!isEpoch(epoch)) throw invalid('epoch', epoch);
  if (!isStreamName(stream)) throw invalid('stream', stream);
  return `${epoch}.${stream}.`;
}

/** Decodes an event ID. Throws `event-id-invalid` for anything outside the grammar. */
export function parseEventId(raw: string): EventId {
  if (raw.length === 0 || raw.length > MAX_EVENT_ID_LENGTH) throw invalid('length', raw);
  const parts = raw.split('.');
  if (parts.length !== 4) throw invalid('shape', raw);
  const [epoch, stream, seqText, chain] = parts as [string, string, string, string];
  if (!isEpoch(epoch)) throw invalid('epoch', raw);
  if (!isStreamName(stream)) throw invalid('stream', raw);
  if (!SEQ.test(seqText)) throw invalid('seq', raw);
  const seq = Number(seqText);
  if (!Number.isSafeInteger(seq)) throw invalid('seq', raw);
  if (!CHAIN.test(chain)) throw invalid('chain', raw);
  return { epoch, stream, seq, chain };
}

/**
 * {@link tryParseEventId} for an ID expected to start with `prefix`, which must be
 * {@link eventIdPrefix}`(epoch, stream)`: only the seq and chain are left to check, so a
 * reader that knows its stream skips the split and the token checks per event. An ID
 * without the prefix is parsed in full.
 */
export function tryParseEventIdIn(raw: string, prefix: string, epoch: string, stream: string): EventId | undefined {
  if (raw.length > MAX_EVENT_ID_LENGTH || !raw.startsWith(prefix)) return tryParseEventId(raw);
  const dot = raw.indexOf('.', prefix.length);
  if (dot === -1) return undefined;
  const seqText = raw.slice(prefix.length, dot);
  const chain = raw.slice(dot + 1);
  if (!SEQ.test(seqText) || !CHAIN.test(chain)) return undefined;
  const seq = Number(seqText);
  if (!Number.isSafeInteger(seq)) return undefined;
  return { epoch, stream, seq, chain };
}

/** Like {@link parseEventId} but returns `undefined` instead of throwing. */
export function tryParseEventId(raw: string): EventId | undefined {
  try {
    return parseEventId(raw);
  } catch {
    return undefined;
  }
}

/** The session's standalone (GET) stream, in every epoch (docs/design.md §2). */
export const STANDALONE_STREAM = '0';

/**
 * The cursor before the first event of `stream`: `<epoch>.<stream>.0.<seed>`. Resuming from
 * it replays the stream from its start, or is refused `replay-window-exceeded` once its
 * first events were trimmed; a client that knows the session but not yet a position on
 * the stream (its position was never saved) resumes from here instead of opening afresh.
 */
export function streamStartId(epoch: string, stream: string): string {
  return `${eventIdPrefix(epoch, stream)}0.${chainSeed(epoch, stream)}`;
}

/** The chain value before the first event of a stream: binds the chain to its epoch and stream. */
export function chainSeed(epoch: string, stream: string): string {
  return sha256b64url(`mcp-continuity/1\u0000${epoch}\u0000${stream}`, CHAIN_LENGTH);
}

/** `chain_n = H(chain_{n-1} ‖ NUL ‖ payload_n)` (the payload is hashed in place, not copied). */
export function nextChain(previous: string, payload: string): string {
  return sha256b64urlOfPair(`${previous}\u0000`, payload, CHAIN_LENGTH);
}

function invalid(part: string, raw: string): ContinuityError {
  // Never echo more than a short prefix of attacker-controlled input.
  return new ContinuityError('event-id-invalid', `Malformed event ID (${part}): ${JSON.stringify(raw.slice(0, 48))}`, { part });
}
