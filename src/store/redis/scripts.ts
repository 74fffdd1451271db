/**
 * The Redis store's Lua scripts. Each write is one script, so the fence check, the checks
 * of the log's rules, the write, retention and the append notice are one atomic step on
 * the node owning the session's hash slot.
 *
 * Key layout (`P` is the key prefix, `{sid}` the session's hash tag; see docs/stores.md):
 *   P{sid}:rec         string   the SessionRecord (JSON)
 *   P{sid}:lease       hash     owner, token, exp (ms, Redis clock), w (fenced writes made)
 *   P{sid}:streams     list     stream names in the order they were opened
 *   P{sid}:h:<stream>  hash     the stream's head: kind, rids, first, base, last, lastc, cum, basecum, closed
 *   P{sid}:e:<stream>  stream   events, ID `0-<seq>`, fields c (chain), a (at), k (cumulative bytes), p (payload)
 *   P{sid}:tail        channel  append notices "<lastSeq> <closed 0|1> <stream>" (sharded pub/sub)
 *   P{owner}:inbox     channel  messages to a replica
 *   Pidle              zset     session id by lastActiveAt (the only key outside a session's slot)
 *
 * `cum` is the running total of payload bytes since the stream began and each event stores
 * its own, so the bytes retained are `cum - basecum` and retention by bytes is a binary
 * search over a few events, never a scan. Bytes are counted by Redis (`#payload`: the
 * UTF-8 length, the same number `byteLength` gives).
 *
 * Expiry (`ttl` > 0): every key of a session is created with the TTL, and all of them are
 * pushed back together when the record's remaining TTL falls below half, so the record
 * never outlives its logs (a session is gone entirely or present entirely).
 */
import { Script } from './link.js';

/** Shared helpers, prepended to every write script. */
const LIB = `
local function int(x) return string.format('%d', x) end
local function wipe(tag)
  for _, s in ipairs(redis.call('LRANGE', tag .. ':streams', 0, -1)) do
    redis.call('DEL', tag .. ':h:' .. s, tag .. ':e:' .. s)
  end
  redis.call('DEL', tag .. ':streams', tag .. ':rec', tag .. ':lease')
end
-- fence is '', 'token' or 'token:floor' (the writes this owner saw acknowledged under
-- token). With a floor, a token or a write counter below the owner's means the store went
-- back in time: the session is wiped (gone entirely, never half-present) and the write
-- refused. Without one, a token other than the current one is just fenced.
local function fenced(lease, fence, tag)
  if fence == '' then return false end
  local token, floor = string.match(fence, '^(%d+):?(%d*)$')
  local tok = redis.call('HGET', lease, 'token') or '0'
  if floor ~= '' and tonumber(tok) < tonumber(token) then
    wipe(tag)
    return redis.error_reply('MCPC_REGRESSED fencing token ' .. tok .. ' < ' .. token)
  end
  if tok ~= token then return redis.error_reply('MCPC_FENCED ' .. tok) end
  local w = tonumber(redis.call('HGET', lease, 'w') or '0')
  if floor ~= '' and w < tonumber(floor) then
    wipe(tag)
    return redis.error_reply('MCPC_REGRESSED write counter ' .. int(w) .. ' < ' .. floor)
  end
  redis.call('HSET', lease, 'w', int(w + 1))
  return false
end
local function touch(tag, ttl)
  if ttl <= 0 then return end
  local rec = tag .. ':rec'
  local left = redis.call('PTTL', rec)
  if left == -2 or left > ttl / 2 then return end
  redis.call('PEXPIRE', rec, ttl)
  redis.call('PEXPIRE', tag .. ':lease', ttl)
  redis.call('PEXPIRE', tag .. ':streams', ttl)
  for _, s in ipairs(redis.call('LRANGE', tag .. ':streams', 0, -1)) do
    redis.call('PEXPIRE', tag .. ':h:' .. s, ttl)
    redis.call('PEXPIRE', tag .. ':e:' .. s, ttl)
  end
end
local function expireNew(key, ttl)
  if ttl > 0 and redis.call('PTTL', key) == -1 then redis.call('PEXPIRE', key, ttl) end
end
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

function script(body: string): Script {
  return new Script(LIB + body);
}

/**
 * KEYS: head, events, lease. ARGV: fence|'', tag, stream, maxEvents, maxBytes, ageCutoff|'',
 * ttl, publish (1: send the append notice; 0: the caller sends it once replicas have the
 * write), then (seq, chain, at, payload) per event. Returns the new lastSeq.
 */
export const APPEND = script(`
local head, events, lease = KEYS[1], KEYS[2], KEYS[3]
local f = fenced(lease, ARGV[1], ARGV[2]); if f then return f end
local tag, stream, ttl = ARGV[2], ARGV[3], tonumber(ARGV[7])
local h = redis.call('HMGET', head, 'last', 'closed', 'first', 'cum', 'basecum', 'base')
if not h[1] then return redis.error_reply('MCPC_CONFLICT Stream ' .. stream .. ' does not exist') end
if h[2] == '1' then return redis.error_reply('MCPC_CONFLICT Stream is closed') end
local last = tonumber(h[1])
local n = (#ARGV - 8) / 4
for i = 0, n - 1 do
  local got = ARGV[9 + i * 4]
  if tonumber(got) ~= last + 1 + i then
    return redis.error_reply('MCPC_CONFLICT Expected seq ' .. int(last + 1 + i) .. ', got ' .. got)
  end
end
if n == 0 then return last end
local cum = tonumber(h[4])
local lastChain
for i = 0, n - 1 do
  local b = 9 + i * 4
  local payload = ARGV[b + 3]
  cum = cum + #payload
  redis.call('XADD', events, '0-' .. ARGV[b], 'c', ARGV[b + 1], 'a', ARGV[b + 2], 'k', int(cum), 'p', payload)
  lastChain = ARGV[b + 1]
end
last = last + n
local first, basecum, base = tonumber(h[3]), tonumber(h[5]), h[6]
local function event(k) return redis.call('XRANGE', events, '0-' .. int(k), '0-' .. int(k))[1][2] end
local function cumAt(k) if k < first then return basecum end return tonumber(event(k)[6]) end
local nf = first
local maxEvents, maxBytes = tonumber(ARGV[4]), tonumber(ARGV[5])
if last - nf + 1 > maxEvents then nf = last - maxEvents + 1 end
if cum - cumAt(nf - 1) > maxBytes then
  local lo, hi = nf - 1, last
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if cum - cumAt(mid) <= maxBytes then hi = mid else lo = mid end
  end
  nf = hi + 1
end
if ARGV[6] ~= '' then
  local cutoff = tonumber(ARGV[6])
  local done = false
  while not done and nf <= last do
    local batch = redis.call('XRANGE', events, '0-' .. int(nf), '+', 'COUNT', 64)
    for _, e in ipairs(batch) do
      if tonumber(e[2][4]) >= cutoff then done = true; break end
      nf = nf + 1
    end
    if #batch == 0 then break end
  end
end
if nf > first then
  local e = event(nf - 1)
  base, basecum = e[2], tonumber(e[6])
  redis.call('XTRIM', events, 'MINID', '0-' .. int(nf))
end
redis.call('HSET', head, 'last', int(last), 'lastc', lastChain, 'cum', int(cum), 'first', int(nf), 'base', base, 'basecum', int(basecum))
expireNew(events, ttl)
touch(tag, ttl)
if ARGV[8] == '1' then redis.call('SPUBLISH', tag .. ':tail', int(last) .. ' 0 ' .. stream) end
return last
`);

/** KEYS: head, events, lease, streams. ARGV: fence|'', tag, stream, seed, kind, requestIds JSON, ttl. */
export const OPEN = script(`
local head, events, lease, list = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local f = fenced(lease, ARGV[1], ARGV[2]); if f then return f end
local tag, stream, seed, ttl = ARGV[2], ARGV[3], ARGV[4], tonumber(ARGV[7])
if redis.call('EXISTS', head) == 1 then return redis.error_reply('MCPC_CONFLICT Stream ' .. stream .. ' already exists') end
redis.call('DEL', events)
redis.call('HSET', head, 'kind', ARGV[5], 'rids', ARGV[6], 'first', '1', 'base', seed, 'last', '0', 'lastc', seed,
  'cum', '0', 'basecum', '0', 'closed', '0')
redis.call('RPUSH', list, stream)
expireNew(head, ttl)
expireNew(list, ttl)
touch(tag, ttl)
return 1
`);

/** KEYS: head, lease. ARGV: fence|'', tag, stream, ttl. */
export const CLOSE = script(`
local head, lease = KEYS[1], KEYS[2]
local f = fenced(lease, ARGV[1], ARGV[2]); if f then return f end
local last = redis.call('HGET', head, 'last')
if not last then return 0 end
redis.call('HSET', head, 'closed', '1')
touch(ARGV[2], tonumber(ARGV[4]))
redis.call('SPUBLISH', ARGV[2] .. ':tail', last .. ' 1 ' .. ARGV[3])
return 1
`);

/** KEYS: head, events, streams. ARGV: stream. */
export const DROP_STREAM = script(`
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('LREM', KEYS[3], 0, ARGV[1])
return 1
`);

/** KEYS: streams. ARGV: tag. */
export const DROP_SESSION = script(`
for _, s in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  redis.call('DEL', ARGV[1] .. ':h:' .. s, ARGV[1] .. ':e:' .. s)
end
redis.call('DEL', KEYS[1])
return 1
`);

/** KEYS: rec. ARGV: json, ttl. Returns 1 if created, 0 if the id exists. */
export const CREATE = script(`
local ttl = tonumber(ARGV[2])
local ok
if ttl > 0 then ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) else ok = redis.call('SET', KEYS[1], ARGV[1], 'NX') end
if ok then return 1 end
return 0
`);

/** KEYS: rec, lease. ARGV: fence|'', json, tag, ttl. Returns 1 if the record existed and was replaced. */
export const PUT = script(`
local f = fenced(KEYS[2], ARGV[1], ARGV[3]); if f then return f end
if not redis.call('SET', KEYS[1], ARGV[2], 'XX', 'KEEPTTL') then return 0 end
touch(ARGV[3], tonumber(ARGV[4]))
return 1
`);

/** KEYS: lease. ARGV: owner, leaseMs, tag, ttl. Returns {owner, token, expiresAt, writes}. */
export const ACQUIRE = script(`
local lease, owner, ms = KEYS[1], ARGV[1], tonumber(ARGV[2])
local now = nowMs()
local l = redis.call('HMGET', lease, 'owner', 'token', 'exp')
if l[1] and l[1] ~= owner and tonumber(l[3]) > now then return {l[1], l[2], l[3], '0'} end
local token = tonumber(l[2] or '0')
if l[1] ~= owner then token = token + 1 end
redis.call('HSET', lease, 'owner', owner, 'token', int(token), 'exp', int(now + ms))
expireNew(lease, tonumber(ARGV[4]))
touch(ARGV[3], tonumber(ARGV[4]))
return {owner, int(token), int(now + ms), redis.call('HGET', lease, 'w') or '0'}
`);

/**
 * KEYS: lease. ARGV: owner, token, leaseMs, tag, ttl, floor|''. Returns 1 when renewed, 0
 * when another owner holds it, -1 when, with a floor, the store went back in time (the
 * lease is gone, or its token or write counter is below ours): then the session is wiped.
 */
export const RENEW = script(`
local l = redis.call('HMGET', KEYS[1], 'owner', 'token', 'w')
local known = ARGV[6] ~= ''
if known and (not l[2] or tonumber(l[2]) < tonumber(ARGV[2]) or tonumber(l[3] or '0') < tonumber(ARGV[6])) then
  wipe(ARGV[4])
  return -1
end
if l[1] ~= ARGV[1] or l[2] ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'exp', int(nowMs() + tonumber(ARGV[3])))
touch(ARGV[4], tonumber(ARGV[5]))
return 1
`);

/** KEYS: lease. ARGV: owner, token. */
export const RELEASE = script(`
local l = redis.call('HMGET', KEYS[1], 'owner', 'token')
if l[1] == ARGV[1] and l[2] == ARGV[2] then redis.call('HSET', KEYS[1], 'exp', '0') end
return 1
`);

/** KEYS: lease. Returns {owner, token, expiresAt} of the live lease, or nil. */
export const CURRENT = script(`
local l = redis.call('HMGET', KEYS[1], 'owner', 'token', 'exp')
if not l[1] or tonumber(l[3]) <= nowMs() then return nil end
return {l[1], l[2], l[3]}
`);
