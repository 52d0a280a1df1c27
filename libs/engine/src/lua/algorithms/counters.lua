--[[ counters.lua: fixed_window (f), sliding_window (s), calendar_month (c): pieces of decide.lua.
algorithms/decide-source.ts splices each section into the script where the frame says
`-- @algorithms`: `@shared` as is, and each piece's `@read`, `@eval` and `@pack` as its branch of
one function per step (alg_read(alg, v), alg_eval(alg, limit, period, param, s1, s2, s3, cost),
alg_pack(alg, x, y, z)), so a call creates no closure per algorithm. window-math.ts mirrors them.

State (one field of the policy key's state hash, see decide.lua "Policy state hashes"):
  f, c   `<b>:<c>`        b = bucket index (the month's for c), c = units counted in bucket b
  s      `<b>:<c>:<p>`    + p = the previous bucket's units
The three read each other's `<b>:<c>` (a reload from fixed_window to sliding_window keeps the count).
@read returns s1, s2, s3 (b, c, p); @eval returns allowed, remaining, reset_ms, retry_ms, keep (until
when the state must be kept), x, y, z (what @pack writes on commit); @slack: periods the hash is kept
past `keep`. Uses the frame's `now`, `floor`, `format`, `DAY_MS`.
--]]

-- @shared
local function counter(cost, limit, sb, sc, bucket, reset_ms, keep)
  local count = 0
  if sb == bucket then count = sc or 0 end
  if count + cost > limit then
    -- retry = reset: the next bucket starts empty.
    return false, math.max(0, limit - count), reset_ms, reset_ms, keep
  end
  return true, limit - count - cost, reset_ms, 0, keep, bucket, count + cost
end

-- UTC months (Howard Hinnant's civil-from-days), the one Lua copy of utc-month.ts.
local function days_from_civil(year, month, day)
  local y = year
  if month <= 2 then y = year - 1 end
  local era = floor(y / 400)
  local yoe = y - era * 400
  local mshift = month + 9
  if month > 2 then mshift = month - 3 end
  local doy = floor((153 * mshift + 2) / 5) + day - 1
  local doe = yoe * 365 + floor(yoe / 4) - floor(yoe / 100) + doy
  return era * 146097 + doe - 719468
end

local function utc_month(ms)
  local z = floor(ms / DAY_MS) + 719468
  local era = floor(z / 146097)
  local doe = z - era * 146097
  local yoe = floor((doe - floor(doe / 1460) + floor(doe / 36524) - floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + floor(yoe / 4) - floor(yoe / 100))
  local mp = floor((5 * doy + 2) / 153)
  local month = mp - 9
  if mp < 10 then month = mp + 3 end
  local year = yoe + era * 400
  if month <= 2 then year = year + 1 end
  local ny, nm = year, month + 1
  if month == 12 then ny, nm = year + 1, 1 end
  return year * 12 + month - 1, days_from_civil(ny, nm, 1) * DAY_MS
end

-- @piece f
-- @read
local b, c, p = string.match(v, '^(%d+):(%d+):?(%d*)$')
return tonumber(b), tonumber(c), tonumber(p)
-- @eval
-- Aligned to epoch multiples of the period; the bucket ends at (b + 1) * period.
-- Kept two periods from the write that begins a bucket (past the bucket's end, which is all a
-- later write of it needs): the expiry is then extended once per bucket, not per write.
local bucket = floor(now / period)
local keep = (bucket + 2) * period
if s1 ~= bucket then keep = now + 2 * period end
return counter(cost, limit, s1, s2, bucket, (bucket + 1) * period - now, keep)
-- @pack
return format('%d:%d', x, y)
-- @slack 0

-- @piece s
-- @read
local b, c, p = string.match(v, '^(%d+):(%d+):?(%d*)$')
return tonumber(b), tonumber(c), tonumber(p)
-- @eval
-- estimate = prev * (P - e) / P + cur, all kept multiplied by P so it stays integer:
-- allowed iff prev * (P - e) + (cur + cost) * P <= limit * P.
local sb, sc, sp = s1, s2, s3
local bucket = floor(now / period)
local to_end = period - (now - bucket * period)
local prev, cur = 0, 0
if sb == bucket then
  prev, cur = sp or 0, sc or 0
elseif sb == bucket - 1 then
  prev = sc or 0
end
local weighted = prev * to_end + cur * period
local allowed = weighted + cost * period <= limit * period
local spent = 0
if allowed then spent = cost end
local after = cur + spent
local remaining = math.max(0, floor((limit * period - weighted - spent * period) / period))
-- cur slides out one period after the current bucket ends; prev alone is gone when it ends.
local reset_ms = 0
if after > 0 then reset_ms = to_end + period elseif prev > 0 then reset_ms = to_end end
if not allowed then
  local retry
  if cur + cost <= limit then
    -- prev's weight alone must shrink: t = (P - e) - floor((limit - cur - cost) * P / prev).
    retry = to_end - floor((limit - cur - cost) * period / prev)
  else
    -- next bucket, where cur becomes prev: x = P - floor((limit - cost) * P / cur).
    retry = to_end + math.max(0, period - floor((limit - cost) * period / cur))
  end
  return false, remaining, reset_ms, retry, (bucket + 2) * period
end
-- As for a fixed window: two periods from the write that begins a bucket, which outlives its use
-- as `prev`; a later write of the bucket needs no more than the next bucket's end.
local keep = (bucket + 2) * period
if sb ~= bucket then keep = now + 2 * period end
return true, remaining, reset_ms, 0, keep, bucket, after, prev
-- @pack
return format('%d:%d:%d', x, y, z)
-- @slack 0

-- @piece c
-- @read
local b, c, p = string.match(v, '^(%d+):(%d+):?(%d*)$')
return tonumber(b), tonumber(c), tonumber(p)
-- @eval
-- The state matters until the month ends; a day of slack for a clock running slightly late.
local index, end_ms = utc_month(now)
return counter(cost, limit, s1, s2, index, end_ms - now, end_ms + DAY_MS)
-- @pack
return format('%d:%d', x, y)
-- @slack 0
