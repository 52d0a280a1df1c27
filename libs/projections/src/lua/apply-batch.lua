--[[ apply-batch.lua: one projector batch into one projection namespace, atomically (DESIGN §4).

The events' effects, their dedup marks and the partition offsets are written together or not at all,
so a crash at any point leaves either the whole batch applied (offsets included) or none of it.

KEYS (all of one namespace, so all in the `{<ns>}` hash-tag slot; built by projection-keys.ts):
  KEYS[1]   offsets hash      tally:proj:{<ns>}:offsets     `<topic>:<partition>` -> next offset
  KEYS[2]   meta hash         tally:proj:{<ns>}:meta        created, updated (epoch ms), events
  KEYS[3]   versions hash     tally:proj:{<ns>}:versions    policy-set version -> first seen (epoch ms)
  KEYS[4]   reload audit set  tally:proj:{<ns>}:audit:~     where policy reloads are recorded
  KEYS[5..] every other key the batch writes, named by its index in the records below
ARGV:
  ARGV[1]  audit retention, ms: rows older than (Redis TIME - retention) are trimmed from every
           audit set this batch writes
  ARGV[2]  dedup set lifetime, ms, renewed on every write to the set
  ARGV[3]  events applied (added to meta `events`)
  then six sections, each a count n followed by its records:
    dedup    n groups of (key index, m, token * m)  every token must be absent, else nothing is written
    packed   n groups of (key index, m, field * m, cost * m, count * m)   per-key usage hashes: field
                                                    = policy key, value `<cost>:<count>` (decimal);
                                                    each field once per group
    hashes   n groups of (key index, m, field * m, increment * m)   usage (per policy) hashes;
                                                    each field once per group; HINCRBY results
    audit    n of (key index, score, member)        ZADD LT: a re-applied row keeps its earliest time
    reloads  n of (version, first seen ms, member)  recorded only for a version never seen, or seen later
    offsets  n of (field, next offset)              stored only when higher than the stored offset
Reply:
  error                 a packed value that is not `<digits>:<digits>`: NOTHING was written
  {0}                   applied (offsets stored)
  {1, token, token, …}  these dedup tokens are already applied: NOTHING was written; the caller folds
                        the batch again without them and retries
--]]

local CHUNK = 1000 -- unpack() of more than ~8000 values overflows the Lua C stack

local retention = tonumber(ARGV[1])
local dedup_ttl = tonumber(ARGV[2])
local applied = tonumber(ARGV[3])
local at = 4

local function take()
  local value = ARGV[at]
  at = at + 1
  return value
end

local function key(index)
  return KEYS[tonumber(index)]
end

-- 1. Dedup check before any write: an event applied by an earlier batch (a redelivery, another
--    projector during a rebalance) makes the whole step a no-op, so the caller can refold.
-- Tokens (like fields and members below) lie contiguous in ARGV, so they are unpacked from ARGV in
-- place rather than copied into tables first: a step carries tens of thousands of them.
local groups = {}
local seen = {}
for g = 1, tonumber(take()) do
  local k, n = key(take()), tonumber(take())
  groups[g] = { k, at, at + n - 1 }
  for i = at, at + n - 1, CHUNK do
    local flags = redis.call('SMISMEMBER', k, unpack(ARGV, i, math.min(i + CHUNK - 1, at + n - 1)))
    for j = 1, #flags do
      if flags[j] == 1 then
        seen[#seen + 1] = ARGV[i + j - 1]
      end
    end
  end
  at = at + n
end
if #seen > 0 then
  local reply = { 1 }
  for i = 1, #seen do
    reply[#reply + 1] = seen[i]
  end
  return reply
end

-- 2. Per-key usage is read and summed before any write, so a malformed stored value fails the step
--    with nothing written. A `keys:` field holds cost and count together: one field per policy key
--    halves what the hottest hashes hold and what each step reads and writes (most keys of a step
--    are distinct, so these are most of its cells).
local function plus(a, b)
  -- Doubles are exact below 2^53: decimal strings shorter than 16 digits add as numbers.
  if #a < 16 and #b < 16 then
    return string.format('%d', tonumber(a) + tonumber(b))
  end
  local out, carry, i, j = {}, 0, #a, #b
  while i > 0 or j > 0 or carry > 0 do
    local d = carry + (i > 0 and a:byte(i) - 48 or 0) + (j > 0 and b:byte(j) - 48 or 0)
    out[#out + 1] = string.char(48 + d % 10)
    carry = math.floor(d / 10)
    i, j = i - 1, j - 1
  end
  return string.reverse(table.concat(out))
end

local packed = {}
for g = 1, tonumber(take()) do
  local k, m = key(take()), tonumber(take())
  local writes, w = {}, 0
  for i = at, at + m - 1, CHUNK do
    local last = math.min(i + CHUNK - 1, at + m - 1)
    local current = redis.call('HMGET', k, unpack(ARGV, i, last))
    for f = i, last do
      local cost, count, stored = ARGV[f + m], ARGV[f + 2 * m], current[f - i + 1]
      if stored then
        local c, n = string.match(stored, '^(%d+):(%d+)$')
        if not c then
          return redis.error_reply('ERR apply-batch: ' .. k .. ' field ' .. ARGV[f] .. ' is not cost:count')
        end
        cost, count = plus(c, cost), plus(n, count)
      end
      writes[w + 1], writes[w + 2] = ARGV[f], cost .. ':' .. count
      w = w + 2
    end
  end
  packed[g] = { k, writes, w }
  at = at + 3 * m
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

for _, group in ipairs(groups) do
  local k, first, last = group[1], group[2], group[3]
  for i = first, last, CHUNK do
    redis.call('SADD', k, unpack(ARGV, i, math.min(i + CHUNK - 1, last)))
  end
  redis.call('PEXPIRE', k, dedup_ttl)
end

for _, group in ipairs(packed) do
  local k, writes, w = group[1], group[2], group[3]
  for i = 1, w, 2 * CHUNK do
    redis.call('HSET', k, unpack(writes, i, math.min(i + 2 * CHUNK - 1, w)))
  end
end

-- Lua numbers are doubles: a sum is done here only while both terms are integers below 2^46 (so
-- exact, and written back by redis.call as plain digits) and the stored one is in HINCRBY's
-- canonical form. Anything else (a huge counter, a value HINCRBY would refuse) goes through HINCRBY
-- itself, so its result, or its error, is HINCRBY's.
local SMALL = 2 ^ 46
local function small(n)
  return n and n % 1 == 0 and n < SMALL and n > -SMALL
end

-- Increments are applied per key, not per field: one read and one write command for all the fields
-- of a key in the step. A step of distinct usage cells otherwise spends most of its Redis time on
-- the fixed cost of one HINCRBY per field. What is stored is what HINCRBY would store.
for _ = 1, tonumber(take()) do
  local k, m = key(take()), tonumber(take())
  -- fields at ARGV[at .. at+m-1], their increments m further on
  for first = at, at + m - 1, CHUNK do
    local last = math.min(first + CHUNK - 1, at + m - 1)
    local current = redis.call('HMGET', k, unpack(ARGV, first, last))
    local writes, w = {}, 0
    for i = first, last do
      local stored, by = current[i - first + 1], tonumber(ARGV[i + m])
      local base = 0
      if stored then
        base = tonumber(stored)
        if not (small(base) and string.format('%d', base) == stored) then
          base = nil
        end
      end
      if base and small(by) then
        writes[w + 1], writes[w + 2] = ARGV[i], base + by
        w = w + 2
      else
        redis.call('HINCRBY', k, ARGV[i], ARGV[i + m])
      end
    end
    if w > 0 then
      redis.call('HSET', k, unpack(writes, 1, w))
    end
  end
  at = at + 2 * m
end

local cutoff = '(' .. string.format('%.0f', now - retention)
local trimmed = {}
for _ = 1, tonumber(take()) do
  local k, score, member = key(take()), take(), take()
  redis.call('ZADD', k, 'LT', score, member)
  trimmed[k] = true
end

-- A version's reload row is written once: re-adding it after retention trimmed it would report a
-- reload that did not happen.
for _ = 1, tonumber(take()) do
  local version, first_seen, member = take(), take(), take()
  local known = redis.call('HGET', KEYS[3], version)
  if not known or tonumber(known) > tonumber(first_seen) then
    redis.call('HSET', KEYS[3], version, first_seen)
    redis.call('ZADD', KEYS[4], 'LT', first_seen, member)
    trimmed[KEYS[4]] = true
  end
end

for k in pairs(trimmed) do
  redis.call('ZREMRANGEBYSCORE', k, '-inf', cutoff)
end

-- Offsets only move forward: a stale batch (fetched before a seek, or by a member that lost the
-- partition) must not rewind the namespace to a point it already passed.
for _ = 1, tonumber(take()) do
  local field, next_offset = take(), take()
  local stored = redis.call('HGET', KEYS[1], field)
  if not stored or tonumber(stored) < tonumber(next_offset) then
    redis.call('HSET', KEYS[1], field, next_offset)
  end
end

redis.call('HSETNX', KEYS[2], 'created', now)
redis.call('HSET', KEYS[2], 'updated', now)
if applied > 0 then
  redis.call('HINCRBY', KEYS[2], 'events', applied)
end
return { 0 }
