--[[ reseed.lua: raise one window's state to at least the counts rebuilt from the ledger (tally reseed).
Never lowers anything: what Redis counted since the loss is real usage too, so each count becomes
max(stored, rebuilt). The state format is decide.lua's (section "Policy state hashes"; window-math.ts):
one hash per policy key, the window's field packed as (algorithms/registry.ts, lua/algorithms/counters.lua)
  fixed_window / calendar_month: `<b>:<c>`        b = bucket index, c = units in bucket b
  sliding_window:                `<b>:<c>:<p>`    + p = the previous bucket's units
and the field `_e`: until when (epoch ms) the hash is kept, which only ever grows.

KEYS[1]  policy state hash   tally:v1:{s<N>}:pk:<policy>:<scope>:<key>
ARGV[1]  algorithm           f = fixed_window, c = calendar_month, s = sliding_window, g = gcra
ARGV[2]  bucket              the current bucket index b
ARGV[3]  count               units of bucket b in the ledger
ARGV[4]  previous            units of bucket b - 1 in the ledger (sliding_window; else 0)
ARGV[5]  ttl_ms              how long the state must be kept from now (as decide.lua keeps it)
ARGV[6]  window              the window's name: its field
Reply: { written (0/1), c before, c after, p before, p after } (before = 0 when absent or stale)
gcra (`g<tat>:<sub>`, lua/algorithms/gcra.lua): ARGV[2] and ARGV[3] are the rebuilt TAT's `tat` and
`sub`; the later of it and the stored TAT is kept. Reply: { written, tat before, tat after, sub
before, sub after }.
--]]

local alg = ARGV[1]
local bucket = tonumber(ARGV[2])
local count = tonumber(ARGV[3])
local previous = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local field = ARGV[6]

local function num(x)
  return string.format('%.0f', x)
end

local st = redis.call('HMGET', KEYS[1], field, '_e')
local kept = tonumber(st[2]) or 0

-- Keeps the hash at least as long as this window needs (never shortened: its other windows may need
-- longer), on the Redis clock decide.lua uses.
local function write(value)
  local t = redis.call('TIME')
  local until_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + math.max(1, ttl)
  if until_ms > kept then
    redis.call('HSET', KEYS[1], field, value, '_e', num(until_ms))
    redis.call('PEXPIRE', KEYS[1], math.max(1, ttl))
  else
    redis.call('HSET', KEYS[1], field, value)
  end
end

if alg == 'g' then
  local tat, sub = nil, nil
  if st[1] then tat, sub = string.match(st[1], '^g(%d+):(%d+)$') end
  tat, sub = tonumber(tat) or 0, tonumber(sub) or 0
  if tat > bucket or (tat == bucket and sub >= count) then
    return { 0, tat, tat, sub, sub }
  end
  write('g' .. num(bucket) .. ':' .. num(count))
  return { 1, tat, bucket, sub, count }
end

local b, c, p
if st[1] then
  b, c, p = string.match(st[1], '^(%d+):(%d+):?(%d*)$')
end
b, c, p = tonumber(b), tonumber(c) or 0, tonumber(p) or 0

-- A window already in a later bucket than the plan was made for: the plan is stale, leave it.
if b and b > bucket then
  return { 0, c, c, p, p }
end

local c_before, p_before, c_after, p_after = 0, 0, count, 0
local value
if alg == 's' then
  p_after = previous
  if b == bucket then
    c_before, p_before = c, p
  elseif b == bucket - 1 then
    -- The stored current bucket has become the previous one.
    p_before = c
  end
  if c_before > c_after then c_after = c_before end
  if p_before > p_after then p_after = p_before end
  if b == bucket and c_after == c_before and p_after == p_before then
    return { 0, c_before, c_after, p_before, p_after }
  end
  value = num(bucket) .. ':' .. num(c_after) .. ':' .. num(p_after)
else
  if b == bucket then c_before = c end
  if c_before >= c_after then
    return { 0, c_before, c_before, 0, 0 }
  end
  value = num(bucket) .. ':' .. num(c_after)
end
write(value)
return { 1, c_before, c_after, p_before, p_after }
