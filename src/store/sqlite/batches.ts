/**
 * One append's events as one row of the `batches` table (schema v3, `./schema.ts`):
 * packing a batch into the row's columns, and reading events back out of a row.
 */
import { byteLength } from '../rules.js';
import { encodedUtf8 } from '../../protocol/chain-hash.js';
import type { LogEvent } from '../types.js';

/** The columns of a `batches` row that describe its events (all but the key). */
export interface BatchColumns {
  /** Sum of `sizes`. */
  bytes: number;
  /** JSON: one number when every event has the same `at`, else an array of them. */
  ats: string;
  /** JSON array of the UTF-8 byte length of each payload. */
  sizes: string;
  /** JSON array of the chain values. */
  chains: string;
  /** The UTF-8 payloads, concatenated. */
  payloads: Buffer;
}

/** What reads and trimming select of a row. */
export interface BatchRow {
  first_seq: number;
  last_seq: number;
  bytes: number;
  ats: string;
  sizes: string;
  chains: string;
}

/** A batch row with where it belongs, oldest first across the store (the store's budget). */
export interface OldestBatchRow extends BatchRow {
  id: number;
  session: string;
  stream: string;
}

export interface BatchRowWithPayloads extends BatchRow {
  payloads: Buffer;
}

/**
 * Room past the counted total: an understated `bytes` then shows as a write longer than
 * the count (a UTF-8 character is at most 4 bytes, so a write that runs into the end of
 * the buffer has still written more than the count).
 */
const SLACK = 4;

/**
 * Packs `events` (at least one) into a row. Encodes each payload once, straight into the
 * row's buffer, at the offset its counted `bytes` gives; a count that does not match what
 * was written (a producer that miscounted) is recounted rather than trusted, since the
 * sizes cut the payloads apart again on read.
 */
export function packBatch(events: readonly LogEvent[]): BatchColumns {
  const n = events.length;
  const sizes = new Array<number>(n);
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const e = events[i] as LogEvent;
    const size = e.bytes ?? byteLength(e.payload);
    sizes[i] = size;
    bytes += size;
  }
  let payloads = write(events, sizes, bytes);
  if (payloads === undefined) {
    bytes = 0;
    for (let i = 0; i < n; i++) bytes += sizes[i] = byteLength((events[i] as LogEvent).payload);
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion -- the assertion narrows the let for the code below; tsc needs it
    payloads = write(events, sizes, bytes) as Buffer;
  }
  const first = events[0] as LogEvent;
  let sameAt = true;
  const chains = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const e = events[i] as LogEvent;
    chains[i] = e.chain;
    if (e.at !== first.at) sameAt = false;
  }
  return {
    bytes,
    ats: JSON.stringify(sameAt ? first.at : events.map((e) => e.at)),
    sizes: JSON.stringify(sizes),
    chains: JSON.stringify(chains),
    payloads,
  };
}

/** The payloads at the offsets `sizes` gives, or `undefined` if a size is not what was written. */
function write(events: readonly LogEvent[], sizes: readonly number[], bytes: number): Buffer | undefined {
  const buf = Buffer.allocUnsafe(bytes + SLACK);
  let offset = 0;
  for (let i = 0; i < events.length; i++) {
    const { payload } = events[i] as LogEvent;
    // The bytes the chain hash just encoded, if they are still there: copied, not encoded again.
    const utf8 = encodedUtf8(payload);
    const size = sizes[i] as number;
    if (utf8 !== undefined && utf8.length === size && offset + size <= bytes) {
      buf.set(utf8, offset);
      offset += size;
      continue;
    }
    const written = buf.write(payload, offset);
    if (written !== sizes[i]) return undefined;
    offset += written;
  }
  return buf.subarray(0, bytes);
}

/** The per-event metadata of a row, decoded. */
export interface BatchMeta {
  sizes: number[];
  /** Every event's `at` (a number), or each one's. */
  ats: number | number[];
}

export function batchMeta(row: BatchRow): BatchMeta {
  return { sizes: JSON.parse(row.sizes) as number[], ats: JSON.parse(row.ats) as number | number[] };
}

export function atOf(meta: BatchMeta, i: number): number {
  return typeof meta.ats === 'number' ? meta.ats : (meta.ats[i] as number);
}

/** Chain value of event `seq` of `row`. */
export function chainOf(row: BatchRow, seq: number): string {
  return (JSON.parse(row.chains) as string[])[seq - row.first_seq] as string;
}

/**
 * Appends the events of `row` with `seq >= from` to `out` until it holds `limit` events.
 * Each event carries its `bytes`, so a replay need not count them again.
 */
export function unpackBatch(row: BatchRowWithPayloads, from: number, limit: number, out: LogEvent[]): void {
  const { sizes, ats } = batchMeta(row);
  const chains = JSON.parse(row.chains) as string[];
  const { payloads } = row;
  let offset = 0;
  for (let i = 0, seq = row.first_seq; i < sizes.length && out.length < limit; i++, seq++) {
    const size = sizes[i] as number;
    if (seq >= from) {
      out.push({
        seq,
        chain: chains[i] as string,
        payload: payloads.toString('utf8', offset, offset + size),
        bytes: size,
        at: typeof ats === 'number' ? ats : (ats[i] as number),
      });
    }
    offset += size;
  }
}
