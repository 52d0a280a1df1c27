--[[ token-bucket.lua: token_bucket (t), a piece of decide.lua (counters.lua says how pieces are
spliced in and what each section returns; window-math.ts mirrors it).

State: `t<tokens * period>:<ts>`: tokens kept multiplied by the period, so refilling e ms adds exactly
e * limit units; ts = the ms of the last commit (never moves backwards). A counter's state reads as
none (it starts afresh). Kept a period longer than it needs (slack 1): a full bucket's state no
longer matters, and the slack spares most commits a PEXPIRE.
--]]

-- @piece t
-- @read
local t, ts = string.match(v, '^t(%d+):(%d+)$')
return tonumber(t), tonumber(ts)
-- @eval
local stt, sts = s1, s2
local capacity = limit * period
local level = capacity
if stt then
  local elapsed = 0
  if sts then elapsed = math.max(0, now - sts) end
  level = math.min(capacity, stt + elapsed * limit)
end
local need = cost * period
if level < need then
  -- wait until need - level has refilled at `limit` per ms.
  return false, floor(level / period), ceil((capacity - level) / limit), ceil((need - level) / limit), now + period
end
local after = level - need
local ts = now
if sts and sts > now then ts = sts end
-- Full again within a period: the state matters until then.
return true, floor(after / period), ceil((capacity - after) / limit), 0, now + period, after, ts
-- @pack
return format('t%d:%d', x, y)
-- @slack 1
