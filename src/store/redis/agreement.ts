/**
 * Replicas that must agree: every replica of one deployment records its key prefix and
 * lease in Redis while it runs, and a replica whose configuration disagrees with a live
 * one refuses to start. Without this, a replica on another prefix or lease joins silently
 * and the deployment splits: sessions one replica created are unknown to another, or a
 * session is taken over while its owner still thinks it holds it.
 *
 * The record is a hash: one field per running replica, `<until>|<config>`, where `until`
 * (Redis clock, ms) is pushed forward by a heartbeat; a replica that died without saying
 * goodbye drops out `lifeMs` after its last heartbeat. The hash lives under the prefix
 * (`P` + `replicas`), or, when the replicas name their deployment, under that name, so
 * that replicas on different prefixes find each other.
 */
import { randomBytes } from 'node:crypto';
import { ContinuityError } from '../../protocol/errors.js';
import { Script, type Link } from './link.js';

/** What replicas of one deployment must share. */
export interface SharedConfig {
  readonly prefix: string;
  /** The lease given to the store (`?leaseMs=` or `leaseMs`); null: not given there. */
  readonly leaseMs: number | null;
}

/** KEYS: registry. ARGV: member, config, lifeMs. Returns a live member's disagreeing config, or nil after registering. */
const JOIN = new Script(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local v = all[i + 1]
  local sep = string.find(v, '|', 1, true)
  if not sep or tonumber(string.sub(v, 1, sep - 1)) < now then
    redis.call('HDEL', KEYS[1], all[i])
  elseif all[i] ~= ARGV[1] and string.sub(v, sep + 1) ~= ARGV[2] then
    return string.sub(v, sep + 1)
  end
end
redis.call('HSET', KEYS[1], ARGV[1], string.format('%d', now + tonumber(ARGV[3])) .. '|' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return false
`);

/** How long a replica's record outlives its last heartbeat, ms. */
const LIFE_MS = 15_000;

/** The canonical text of a configuration: compared as a string, in Lua. */
function encode(config: SharedConfig): string {
  return JSON.stringify({ prefix: config.prefix, leaseMs: config.leaseMs });
}

function describe(text: string): string {
  try {
    const c = JSON.parse(text) as SharedConfig;
    return `prefix ${JSON.stringify(c.prefix)}, leaseMs ${c.leaseMs ?? '(not set on the store)'}`;
  } catch {
    return text.slice(0, 200);
  }
}

/** A replica's membership: joined on start, renewed while it runs, left on close. */
export class Agreement {
  readonly #link: Link;
  readonly #key: string;
  readonly #member = randomBytes(9).toString('base64url');
  readonly #config: string;
  readonly #onError: (error: Error) => void;
  #timer: ReturnType<typeof setInterval> | undefined;

  private constructor(link: Link, key: string, config: SharedConfig, onError: (error: Error) => void) {
    this.#link = link;
    this.#key = key;
    this.#config = encode(config);
    this.#onError = onError;
  }

  /**
   * Records `config` under `key`, or rejects with `store-config-mismatch` when a running
   * replica's differs. Then renews the record until {@link leave}.
   */
  static async join(link: Link, key: string, config: SharedConfig, onError: (error: Error) => void): Promise<Agreement> {
    const agreement = new Agreement(link, key, config, onError);
    await agreement.#renew();
    agreement.#timer = setInterval(() => {
      agreement.#renew().catch((error: unknown) => agreement.#onError(error as Error));
    }, LIFE_MS / 3);
    agreement.#timer.unref();
    return agreement;
  }

  async #renew(): Promise<void> {
    const other = await this.#link.script(JOIN, [this.#key], [this.#member, this.#config, String(LIFE_MS)]);
    if (typeof other === 'string') {
      throw new ContinuityError(
        'store-config-mismatch',
        `This replica's Redis store (${describe(this.#config)}) disagrees with a running replica's (${describe(other)}): ` +
          `give every replica of one deployment the same ?prefix= and ?leaseMs= (a replica that stopped drops out ${LIFE_MS / 1000} s after it last ran)`,
      );
    }
  }

  /** Stops renewing and removes this replica's record (best effort: it expires anyway). */
  async leave(): Promise<void> {
    clearInterval(this.#timer);
    await this.#link.command(this.#key, ['HDEL', this.#key, this.#member]).catch(() => {});
  }
}
