--[[ apply-batch.lua: one projector batch into one shard of a projection namespace, atomically (DESIGN §4).

The events' effects, their dedup marks and the partition offsets are written together or not at all.
Redis does not undo the writes of a script that fails midway, so the script is in two phases: phase 1
reads everything the step touches and runs every check (types of keys, formats of stored values,
every sum against MAX) with no write; phase 2 writes only values phase 1 computed, with commands
that cannot fail on keys phase 1 found of the right type. A step that cannot apply writes nothing.

KEYS (all of one shard, so all in the `{<ns>:s<s>}` hash-tag slot; built by projection-keys.ts):
  KEYS[1]   offsets hash      tally:proj:{<ns>:s<s>}:offsets   `<topic>:<partition>` -> next offset
  KEYS[2]   meta hash         tally:proj:{<ns>:s<s>}:meta      created, updated (epoch ms), events
  KEYS[3]   versions hash     tally:proj:{<ns>:s<s>}:versions  policy-set version -> first seen (epoch ms)
  KEYS[4]   reload audit set  tally:proj:{<ns>:s<s>}:audit:~   where policy reloads are recorded
  KEYS[5..] every other key the batch writes, named by its index in the records below
ARGV:
  ARGV[1]  audit retention, ms: rows older than (Redis TIME - retention) are trimmed from every
           audit set this batch writes
  ARGV[2]  dedup set lifetime, ms, renewed on every write to the set
  ARGV[3]  events applied (added to meta `events`)
  ARGV[4]  MAX: the largest value any counter may hold, 2^53 - 1 (exact as a double: Lua's numbers)
  then six sections, each a count n followed by its records:
    dedup    n groups of (key index, m, token * m)  every token must be absent, else nothing is written
    packed   n groups of (key index, m, field * m, cost * m, count * m)   per-key usage hashes: field
                                                    = policy key, value `<cost>:<count>` (decimal);
                                                    each field once per group
    hashes   n groups of (key index, m, field * m, increment * m)   usage (per policy) hashes;
                                                    each field once per group
    audit    n of (key index, score, member)        ZADD LT: a re-applied row keeps its earliest time
    reloads  n of (version, first seen ms, member)  recorded only for a version never seen, or seen later
    offsets  n of (field, next offset)              stored only when higher than the stored offset
  A stored counter is decimal digits worth at most MAX (exact-counter.ts reads the same rule).
  Increments are counters of at most MAX too: the caller's fold never sums past it (fold-events.ts).
Reply (in every case but {0}, NOTHING was written):
  {0}                   applied (offsets stored)
  {1, token, token, …}  these dedup tokens are already applied: the caller folds the batch again
                        without them and retries
  {2, (key index, field, kind, stored) * n}   cells the events cannot go into: kind `overflow` (the
                        sum would pass MAX; stored = the stored value, '' if none), `corrupt` (the
                        stored value is not a counter, or not `<counter>:<counter>`), `wrongtype` (the
                        key is not the type it must be; field ''). The caller refuses the events that
                        do not fit (dead-letters them) and retries with the rest.
  error `ERR apply-batch: …`  a shard-wide key (KEYS[1..4]) is unusable, or the arguments are
                        malformed: no event can be blamed, the step cannot apply until it is repaired
--]]

local CHUNK = 1000 -- unpack() of more than ~8000 values overflows the Lua C stack

local retention = tonumber(ARGV[1])
local dedup_ttl = tonumber(ARGV[2])
local applied = tonumber(ARGV[3])
local MAX = tonumber(ARGV[4])
local at = 5

local function take()
  local value = ARGV[at]
  at = at + 1
  return value
end

local function fail(message)
  return redis.error_reply('ERR apply-batch: ' .. message)
end

-- The number a string of digits (or nil) holds when it is at most 16 digits worth at most MAX; else nil.
local function within(d)
  if d and #d <= 16 then
    local n = tonumber(d)
    if n <= MAX then
      return n
    end
  end
  return nil
end

-- The number a stored decimal counter holds: digits only, worth at most MAX; else nil.
local function counter(s)
  if type(s) == 'string' and string.find(s, '^%d+$') then
    return within(s)
  end
  return nil
end

-- Decimal strings of any length (Kafka offsets are int64): a > b, without going through doubles.
local function later(a, b)
  a, b = string.gsub(a, '^0+(%d)', '%1'), string.gsub(b, '^0+(%d)', '%1')
  if #a ~= #b then
    return #a > #b
  end
  return a > b
end

local problems = { 2 }
local function problem(index, field, kind, stored)
  local n = #problems
  problems[n + 1], problems[n + 2], problems[n + 3], problems[n + 4] = index, field, kind, stored or ''
end

-- Phase 1: reads and checks only. -------------------------------------------------------------

-- 1a. Dedup check: an event applied by an earlier batch (a redelivery, another projector during a
--     rebalance) makes the whole step a no-op, so the caller can refold. Tokens (like fields and
--     members below) lie contiguous in ARGV, so they are unpacked from ARGV in place rather than
--     copied into tables first: a step carries tens of thousands of them.
local groups = {}
local seen = {}
for g = 1, tonumber(take()) do
  local index, n = tonumber(take()), tonumber(take())
  local k = KEYS[index]
  groups[g] = { k, at, at + n - 1 }
  for i = at, at + n - 1, CHUNK do
    local flags = redis.pcall('SMISMEMBER', k, unpack(ARGV, i, math.min(i + CHUNK - 1, at + n - 1)))
    if flags.err then
      problem(index, '', 'wrongtype')
      break
    end
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

-- 1b. Per-key usage: a `keys:` field holds cost and count together (one field per policy key halves
--     what the hottest hashes hold and what each step reads and writes). The new values are
--     computed here, written in phase 2.
local packed = {}
for g = 1, tonumber(take()) do
  local index, m = tonumber(take()), tonumber(take())
  local k = KEYS[index]
  local writes, w = {}, 0
  for i = at, at + m - 1, CHUNK do
    local last = math.min(i + CHUNK - 1, at + m - 1)
    local current = redis.pcall('HMGET', k, unpack(ARGV, i, last))
    if current.err then
      problem(index, '', 'wrongtype')
      break
    end
    for f = i, last do
      local stored = current[f - i + 1]
      if not stored then
        -- A new field takes the step's own sums, which the fold keeps within MAX: no arithmetic.
        writes[w + 1], writes[w + 2] = ARGV[f], ARGV[f + m] .. ':' .. ARGV[f + 2 * m]
        w = w + 2
      else
        local c, n = string.match(stored, '^(%d+):(%d+)$')
        local cost, count = within(c), within(n)
        if not cost or not count then
          problem(index, ARGV[f], 'corrupt', stored)
        else
          cost, count = cost + tonumber(ARGV[f + m]), count + tonumber(ARGV[f + 2 * m])
          if cost > MAX or count > MAX then
            problem(index, ARGV[f], 'overflow', stored)
          else
            writes[w + 1], writes[w + 2] = ARGV[f], string.format('%d:%d', cost, count)
            w = w + 2
          end
        end
      end
    end
  end
  packed[g] = { k, writes, w }
  at = at + 3 * m
end

-- 1c. Per-policy totals: read per key (one HMGET for all the fields of a key in the step, not one
--     HINCRBY per field: a step of distinct cells otherwise spends most of its Redis time on the
--     fixed cost of a command per field), summed here as doubles, exact up to MAX.
local sums = {}
for g = 1, tonumber(take()) do
  local index, m = tonumber(take()), tonumber(take())
  local k = KEYS[index]
  local writes, w = {}, 0
  for first = at, at + m - 1, CHUNK do
    local last = math.min(first + CHUNK - 1, at + m - 1)
    local current = redis.pcall('HMGET', k, unpack(ARGV, first, last))
    if current.err then
      problem(index, '', 'wrongtype')
      break
    end
    for i = first, last do
      local stored = current[i - first + 1]
      if not stored then
        writes[w + 1], writes[w + 2] = ARGV[i], ARGV[i + m]
        w = w + 2
      else
        local base = counter(stored)
        if not base then
          problem(index, ARGV[i], 'corrupt', stored)
        elseif base + tonumber(ARGV[i + m]) > MAX then
          problem(index, ARGV[i], 'overflow', stored)
        else
          writes[w + 1], writes[w + 2] = ARGV[i], string.format('%d', base + tonumber(ARGV[i + m]))
          w = w + 2
        end
      end
    end
  end
  sums[g] = { k, writes, w }
  at = at + 2 * m
end

-- TYPE answers a status reply, which Lua sees as { ok = 'zset' }.
local function zset_or_none(k)
  local t = redis.call('TYPE', k).ok
  return t == 'zset' or t == 'none'
end

-- 1d. Audit rows go to sorted sets: ZADD on a key of another type would fail in phase 2.
local rows_at = at
local checked = {}
for _ = 1, tonumber(take()) do
  local index = tonumber(take())
  at = at + 2
  if not checked[index] then
    checked[index] = true
    if not zset_or_none(KEYS[index]) then
      if index == 4 then
        return fail(KEYS[4] .. ' is not a sorted set')
      end
      problem(index, '', 'wrongtype')
    end
  end
end

-- 1e. Reloads: a version's reload row is written once; re-adding it after retention trimmed it
--     would report a reload that did not happen.
local reloads = {}
local reload_count = tonumber(take())
if reload_count > 0 and not zset_or_none(KEYS[4]) then
  return fail(KEYS[4] .. ' is not a sorted set')
end
for _ = 1, reload_count do
  local version, first_seen, member = take(), take(), take()
  local known = redis.pcall('HGET', KEYS[3], version)
  if type(known) == 'table' and known.err then
    return fail(KEYS[3] .. ' is not a hash')
  end
  if known and not counter(known) then
    return fail(KEYS[3] .. ' field ' .. version .. ' is not a time')
  end
  if not known or counter(known) > tonumber(first_seen) then
    reloads[#reloads + 1] = { version, first_seen, member }
  end
end

-- 1f. Offsets only move forward: a stale batch (fetched before a seek, or by a member that lost the
--     partition) must not rewind the shard to a point it already passed.
local offsets, o = {}, 0
for _ = 1, tonumber(take()) do
  local field, next_offset = take(), take()
  local stored = redis.pcall('HGET', KEYS[1], field)
  if type(stored) == 'table' and stored.err then
    return fail(KEYS[1] .. ' is not a hash')
  end
  if stored and not string.find(stored, '^%d+$') then
    return fail(KEYS[1] .. ' field ' .. field .. ' is not an offset')
  end
  if not stored or later(next_offset, stored) then
    offsets[o + 1], offsets[o + 2] = field, next_offset
    o = o + 2
  end
end

-- 1g. The shard's event count: a counter like the others.
local events = redis.pcall('HGET', KEYS[2], 'events')
if type(events) == 'table' and events.err then
  return fail(KEYS[2] .. ' is not a hash')
end
if events and not (counter(events) and counter(events) + applied <= MAX) then
  return fail(KEYS[2] .. ' field events is not a counter that can take ' .. applied .. ' more')
end

if #problems > 1 then
  return problems
end

-- Phase 2: writes only. ---------------------------------------------------------------------------

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

for _, group in ipairs(groups) do
  local k, first, last = group[1], group[2], group[3]
  for i = first, last, CHUNK do
    redis.call('SADD', k, unpack(ARGV, i, math.min(i + CHUNK - 1, last)))
  end
  redis.call('PEXPIRE', k, dedup_ttl)
end

for _, list in ipairs({ packed, sums }) do
  for _, group in ipairs(list) do
    local k, writes, w = group[1], group[2], group[3]
    for i = 1, w, 2 * CHUNK do
      redis.call('HSET', k, unpack(writes, i, math.min(i + 2 * CHUNK - 1, w)))
    end
  end
end

local cutoff = '(' .. string.format('%.0f', now - retention)
local trimmed = {}
at = rows_at
for _ = 1, tonumber(take()) do
  local k, score, member = KEYS[tonumber(take())], take(), take()
  redis.call('ZADD', k, 'LT', score, member)
  trimmed[k] = true
end

for _, reload in ipairs(reloads) do
  redis.call('HSET', KEYS[3], reload[1], reload[2])
  redis.call('ZADD', KEYS[4], 'LT', reload[2], reload[3])
  trimmed[KEYS[4]] = true
end

for k in pairs(trimmed) do
  redis.call('ZREMRANGEBYSCORE', k, '-inf', cutoff)
end

if o > 0 then
  redis.call('HSET', KEYS[1], unpack(offsets, 1, o))
end

redis.call('HSETNX', KEYS[2], 'created', now)
redis.call('HSET', KEYS[2], 'updated', now)
if applied > 0 then
  redis.call('HINCRBY', KEYS[2], 'events', applied)
end
return { 0 }
