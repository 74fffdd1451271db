/** Rows of the SQLite store's tables, and their conversion to the store's types. */
import type { SessionRecord, StreamHead, StreamInfo } from '../types.js';

export interface SessionRow {
  id: string;
  epoch: string;
  past_epochs: string;
  protocol_version: string;
  initialize: string;
  principal: string | null;
  created_at: number;
  last_active_at: number;
  /** Absent in files before schema version 4 (read only by the migration test). */
  state?: string | null;
}

/** The part of a streams row an append reads. */
export interface AppendHeadRow {
  first_seq: number;
  base_chain: string;
  last_seq: number;
  last_chain: string;
  bytes: number;
  closed: number;
}

export interface StreamRow extends AppendHeadRow {
  kind: StreamInfo['kind'];
  request_ids: string;
}

/** The window a claimed append left (the UPDATE's RETURNING). */
export interface ClaimedHead {
  first_seq: number;
  base_chain: string;
  bytes: number;
}

export function toHead(row: StreamRow): StreamHead {
  return {
    kind: row.kind,
    requestIds: JSON.parse(row.request_ids) as string[],
    firstSeq: row.first_seq,
    baseChain: row.base_chain,
    lastSeq: row.last_seq,
    lastChain: row.last_chain,
    closed: row.closed !== 0,
  };
}

export function toRecord(row: SessionRow): SessionRecord {
  const record: SessionRecord = {
    id: row.id,
    epoch: row.epoch,
    pastEpochs: JSON.parse(row.past_epochs) as string[],
    protocolVersion: row.protocol_version,
    initialize: row.initialize,
    createdAt: row.created_at,
    lastActiveAt: row.last_active_at,
  };
  if (row.principal !== null) record.principal = row.principal;
  if (typeof row.state === 'string') record.state = row.state;
  return record;
}
