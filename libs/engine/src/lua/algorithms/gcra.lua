--[[ gcra.lua: gcra (g), the generic cell rate algorithm, a piece of decide.lua (counters.lua says
how pieces are spliced in; algorithms/gcra.ts is the same maths and says why it is exact).

param: burst, how many units may pass at once. T = period / limit; times kept in ms * limit, so T is
`period`, an integer.
State: `g<tat>:<sub>`: the theoretical arrival time TAT = tat + sub / limit ms (0 <= sub < limit).
Another algorithm's state reads as none. Kept a period past TAT (slack 1): past TAT the state no
longer matters, and the slack spares most commits a PEXPIRE.
--]]

-- @piece g
-- @read
local tat, sub = string.match(v, '^g(%d+):(%d+)$')
return tonumber(tat), tonumber(sub)
-- @eval
local cap = param * period
-- the debt: how far TAT is ahead of now, in ms * limit
local debt = 0
if s1 then debt = math.max(0, (s1 - now) * limit + (s2 or 0)) end
local need = debt + cost * period
if need > cap then
  local reset = ceil(debt / limit)
  return false, math.max(0, floor((cap - debt) / period)), reset, ceil((need - cap) / limit), now + reset
end
local ahead = floor(need / limit)
local reset = ceil(need / limit)
return true, floor((cap - need) / period), reset, 0, now + reset, now + ahead, need - ahead * limit
-- @pack
return format('g%d:%d', x, y)
-- @slack 1
