--[[ reseed.lua: raise one window's state to at least the counts rebuilt from the ledger (tally reseed).
Never lowers anything: what Redis counted since the loss is real usage too, so each count becomes
max(stored, rebuilt). The hash format is decide.lua's (see window-math.ts):
  fixed_window / calendar_month: b = bucket index, c = units in bucket b
  sliding_window: b = current bucket index, c = its units, p = the previous bucket's units

KEYS[1]  window state hash   tally:v1:{s<N>}:w:<policy>:<window>:<scope>:<key>
ARGV[1]  algorithm           f = fixed_window, c = calendar_month, s = sliding_window
ARGV[2]  bucket              the current bucket index b
ARGV[3]  count               units of bucket b in the ledger
ARGV[4]  previous            units of bucket b - 1 in the ledger (sliding_window; else 0)
ARGV[5]  ttl_ms              PEXPIRE when the hash is written (as decide.lua sets on a commit)
Reply: { written (0/1), c before, c after, p before, p after } (before = 0 when absent or stale)
--]]

local alg = ARGV[1]
local bucket = tonumber(ARGV[2])
local count = tonumber(ARGV[3])
local previous = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])

local function num(x)
  return string.format('%.0f', x)
end

local st = redis.call('HMGET', KEYS[1], 'b', 'c', 'p')
local b, c, p = tonumber(st[1]), tonumber(st[2]) or 0, tonumber(st[3]) or 0

-- A hash already in a later bucket than the plan was made for: the plan is stale, leave it.
if b and b > bucket then
  return { 0, c, c, p, p }
end

local c_before, p_before, c_after, p_after = 0, 0, count, 0
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
  redis.call('HSET', KEYS[1], 'b', num(bucket), 'c', num(c_after), 'p', num(p_after))
else
  if b == bucket then c_before = c end
  if c_before >= c_after then
    return { 0, c_before, c_before, 0, 0 }
  end
  redis.call('HSET', KEYS[1], 'b', num(bucket), 'c', num(c_after))
end
redis.call('PEXPIRE', KEYS[1], math.max(1, ttl))
return { 1, c_before, c_after, p_before, p_after }
