/** A stream checkpoint's shape: what a persisted position must look like to be trusted again. */
import { tryParseEventId } from '../protocol/event-id.js';
import type { IdScheme, StreamCheckpoint } from './verdicts.js';
import { isRecord, isText } from './shape.js';

// Decimal counters up to 15 digits are always safe integers; longer ones are opaque.
export const INTEGER_ID = /^[0-9]{1,15}$/;

const SCHEMES: ReadonlySet<string> = new Set<IdScheme>(['chained', 'integer', 'opaque']);
/** Longest ID a checkpoint keeps: SSE IDs are unbounded on the wire, a checkpoint is not. */
export const MAX_CHECKPOINT_ID_LENGTH = 1024;
const MAX_STREAM_KEY_LENGTH = 256;
const DIGEST = /^[A-Za-z0-9_-]{16}$/;

/** Is `value` a well-formed {@link StreamCheckpoint} (internally consistent, too)? */
export function isStreamCheckpoint(value: unknown): value is StreamCheckpoint {
  return streamCheckpointProblem(value) === undefined;
}

/** What is wrong with `value` as a {@link StreamCheckpoint}, or undefined if nothing. */
export function streamCheckpointProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not an object';
  const v = value;
  if (!isText(v.stream, MAX_STREAM_KEY_LENGTH)) return 'stream';
  if (!isText(v.lastId, MAX_CHECKPOINT_ID_LENGTH) || v.lastId.length === 0) return 'lastId';
  if (typeof v.scheme !== 'string' || !SCHEMES.has(v.scheme)) return 'scheme';
  if (v.updatedAt !== undefined && !Number.isFinite(v.updatedAt)) return 'updatedAt';
  if (v.complete !== undefined && typeof v.complete !== 'boolean') return 'complete';
  if (v.scheme === 'chained') {
    const parsed = tryParseEventId(v.lastId);
    if (parsed === undefined) return 'lastId';
    if (parsed.stream !== v.stream) return 'stream';
    if (v.seq !== undefined && v.seq !== parsed.seq) return 'seq';
    if (v.chain !== undefined && v.chain !== parsed.chain) return 'chain';
  } else if (v.scheme === 'integer') {
    if (!INTEGER_ID.test(v.lastId)) return 'lastId';
    if (v.seq !== undefined && v.seq !== Number(v.lastId)) return 'seq';
    if (v.digest !== undefined && !(typeof v.digest === 'string' && DIGEST.test(v.digest))) return 'digest';
  }
  return undefined;
}
