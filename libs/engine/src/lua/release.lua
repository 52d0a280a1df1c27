--[[ release.lua: gives a concurrency lease's units back, atomically (see decide.lua, "Concurrency
windows and leases", for the sorted sets it edits and the record it reads; all keys in the lease's
slot {s<N>}).

KEYS[1]  lease record   tally:v1:{s<N>}:lease:<decision id>   (string, see decide.lua and keys.ts)
KEYS[2]  outbox stream  tally:v1:{s<N>}:outbox
ARGV[1]  now ms; '' = the Redis clock (TIME). Tests pass a fixed value.
ARGV[2]  lease id (`s<N>-<decision id>`): with the units, the member of each window's sorted set
ARGV[3]  the tenants the caller's token may act for, newline-separated; '' = any tenant
Reply: { status, expires_at_ms, released_at_ms }
  status: 0 unknown lease, 1 released now (units returned, release event appended to the outbox),
  2 already released (nothing changes), 3 expired before this call (its units had returned at expiry;
  nothing else changes), 4 the lease belongs to a tenant outside ARGV[3] (nothing changes).
The window keys of the lease were declared as KEYS of the decide.lua call that took it; here they
are read from the record: same slot, named by the record that decide.lua wrote.
--]]

local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end

local record = redis.call('GET', KEYS[1])
if not record then return { 0, 0, 0 } end
-- <expires>\n<units>\n<released at, or empty>\n<window keys, tab-separated>\n<payload>
local expires, units, released, keys, payload = string.match(record, '^(%d+)\n(%d+)\n(%d*)\n([^\n]*)\n(.*)$')
expires = tonumber(expires)

if ARGV[3] ~= '' then
  local tenant = cjson.decode(payload).tenant
  local allowed = false
  if type(tenant) == 'string' then
    for t in string.gmatch(ARGV[3], '[^\n]+') do
      if t == tenant then allowed = true end
    end
  end
  if not allowed then return { 4, expires, 0 } end
end

if released ~= '' then return { 2, expires, tonumber(released) } end

-- Expired or not, the members still present are removed and their units added back, exactly once
-- (a decision's reclaim and this ZREM cannot both find a member). Only a live lease is "released".
local member = ARGV[2] .. '|' .. units
for key in string.gmatch(keys, '[^\t]+') do
  if redis.call('ZREM', key, member) == 1 then redis.call('ZINCRBY', key, tonumber(units), '#') end
end
if expires <= now then return { 3, expires, 0 } end

redis.call('SET', KEYS[1], expires .. '\n' .. units .. '\n' .. now .. '\n' .. keys .. '\n' .. payload, 'KEEPTTL')
redis.call('XADD', KEYS[2], '*', 'l', payload, 't', now)
return { 1, expires, now }
