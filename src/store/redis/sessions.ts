/**
 * The Redis store's session records and leases. A record is a JSON string in the
 * session's slot; `Pidle`, a sorted set of ids by `lastActiveAt`, answers `count` and
 * `idleSince` on a cluster without scanning every master. The index is kept beside the
 * record (a second command, since it lives in another slot): it may briefly lag a write,
 * and it keeps an id whose record expired until the idle sweep deletes it, so
 * `idleSince` also finds sessions whose keys Redis expired and lets their logs be dropped.
 */
import { ContinuityError } from '../../protocol/errors.js';
import { checkLeaseArgs } from '../local-cluster.js';
import type { WriteFloors } from './floors.js';
import type { Keys } from './keys.js';
import type { Link } from './link.js';
import { ACQUIRE, CREATE, CURRENT, PUT, RELEASE, RENEW } from './scripts.js';
import type { Lease, Ownership, SessionRecord, SessionStore } from '../types.js';

export class RedisSessionStore implements SessionStore {
  readonly #link: Link;
  readonly #keys: Keys;
  readonly #ttl: string;
  readonly #floors: WriteFloors;

  constructor(link: Link, keys: Keys, ttlMs: number, floors: WriteFloors) {
    this.#link = link;
    this.#keys = keys;
    this.#ttl = String(ttlMs);
    this.#floors = floors;
  }

  async create(record: SessionRecord): Promise<void> {
    const created = await this.#link.script(CREATE, [this.#keys.record(record.id)], [encode(record), this.#ttl]);
    if (created !== 1) throw new ContinuityError('store-conflict', 'Session id already exists');
    await this.#index(['ZADD', this.#keys.idle(), String(record.lastActiveAt), record.id]);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const key = this.#keys.record(id);
    const json = await this.#link.command(key, ['GET', key]);
    return typeof json === 'string' ? decode(json) : undefined;
  }

  async put(record: SessionRecord, fence?: number): Promise<void> {
    const k = this.#keys;
    const replaced = await this.#link.script(
      PUT,
      [k.record(record.id), k.lease(record.id)],
      [this.#floors.fenceArg(record.id, fence), encode(record), k.tag(record.id), this.#ttl],
    );
    this.#floors.acked(record.id, fence);
    // XX: never re-add an id that a concurrent delete just removed.
    if (replaced === 1) await this.#index(['ZADD', k.idle(), 'XX', String(record.lastActiveAt), record.id]);
  }

  async delete(id: string): Promise<void> {
    const k = this.#keys;
    this.#floors.forget(id);
    await this.#link.command(k.record(id), ['DEL', k.record(id), k.lease(id)]);
    await this.#index(['ZREM', k.idle(), id]);
  }

  async count(): Promise<number> {
    return Number(await this.#index(['ZCARD', this.#keys.idle()]));
  }

  async idleSince(cutoff: number, limit: number): Promise<string[]> {
    if (!(limit > 0)) return [];
    const args = ['ZRANGE', this.#keys.idle(), '-inf', `(${cutoff}`, 'BYSCORE'];
    if (limit < Number.MAX_SAFE_INTEGER) args.push('LIMIT', '0', String(Math.floor(limit)));
    return (await this.#index(args)) as string[];
  }

  #index(args: string[]): Promise<unknown> {
    return this.#link.command(this.#keys.idle(), args);
  }
}

function encode(r: SessionRecord): string {
  return JSON.stringify(r);
}

function decode(json: string): SessionRecord {
  const r = JSON.parse(json) as SessionRecord;
  return {
    id: r.id,
    epoch: r.epoch,
    pastEpochs: r.pastEpochs,
    protocolVersion: r.protocolVersion,
    initialize: r.initialize,
    ...(r.principal === undefined ? {} : { principal: r.principal }),
    createdAt: r.createdAt,
    lastActiveAt: r.lastActiveAt,
    ...(typeof r.state === 'string' ? { state: r.state } : {}),
  };
}

/** Leases in `P{sid}:lease`, judged by the Redis server's clock so every replica agrees. */
export class RedisOwnership implements Ownership {
  readonly #link: Link;
  readonly #keys: Keys;
  readonly #ttl: string;
  readonly #floors: WriteFloors;
  readonly #onRegressed: (error: Error) => void;

  constructor(link: Link, keys: Keys, ttlMs: number, floors: WriteFloors, onRegressed: (error: Error) => void) {
    this.#link = link;
    this.#keys = keys;
    this.#ttl = String(ttlMs);
    this.#floors = floors;
    this.#onRegressed = onRegressed;
  }

  async acquire(session: string, owner: string, leaseMs: number): Promise<Lease> {
    checkLeaseArgs(owner, leaseMs);
    const k = this.#keys;
    const reply = await this.#link.script(ACQUIRE, [k.lease(session)], [owner, String(Math.ceil(leaseMs)), k.tag(session), this.#ttl]);
    const lease = toLease(reply) as Lease;
    if (lease.owner === owner) this.#floors.acquired(session, lease.token, Number((reply as unknown[])[3] ?? 0));
    return lease;
  }

  async renew(session: string, owner: string, token: number, leaseMs: number): Promise<boolean> {
    checkLeaseArgs(owner, leaseMs);
    const k = this.#keys;
    const floor = this.#floors.floorArg(session, token);
    const reply = await this.#link.script(RENEW, [k.lease(session)], [owner, String(token), String(Math.ceil(leaseMs)), k.tag(session), this.#ttl, floor]);
    if (reply === 1) return true;
    this.#floors.forget(session);
    // A lease that is simply gone (the session was deleted, or Redis lost everything) is
    // not news; one whose token or write counter went back is.
    if (reply === -1 && floor !== '') {
      this.#onRegressed(new ContinuityError('store-regressed', `Redis went back in time for session ${session.slice(0, 64)}: the session was ended`));
    }
    return false;
  }

  async release(session: string, owner: string, token: number): Promise<void> {
    // The floor stays: if this process takes the session back under the same token, a
    // store that lost writes meanwhile is still noticed.
    await this.#link.script(RELEASE, [this.#keys.lease(session)], [owner, String(token)]);
  }

  async current(session: string): Promise<Lease | undefined> {
    return toLease(await this.#link.script(CURRENT, [this.#keys.lease(session)], []));
  }
}

function toLease(reply: unknown): Lease | undefined {
  if (!Array.isArray(reply)) return undefined;
  const [owner, token, expiresAt] = reply as [string, string, string];
  return { owner: String(owner), token: Number(token), expiresAt: Number(expiresAt) };
}
