--[[ extend.lua: keeps a live concurrency lease for longer, atomically (see decide.lua, "Concurrency
windows and leases", for the sorted sets and the record; release.lua for the record's reader; all
keys in the lease's slot {s<N>}).

KEYS[1]  lease record   tally:v1:{s<N>}:lease:<decision id>   (string, see decide.lua and keys.ts)
ARGV[1]  now ms; '' = the Redis clock (TIME). Tests pass a fixed value.
ARGV[2]  lease id (`s<N>-<decision id>`): with the units, the member of each window's sorted set
ARGV[3]  the tenants the caller's token may act for, newline-separated; '' = any tenant
ARGV[4]  the TTL asked for (ms, integer >= 1): the lease then expires that long after now; '' = the
         longest allowed (ARGV[5]'s bound)
ARGV[5]  the lease TTLs in force: one line `<policy>\t<window>\t<lease_ttl ms>` per concurrency
         window of the policy set in force. The bound of an extension is the shortest of them among
         the lease's windows (named by its payload), as decide.lua gave the lease the shortest.
Reply: { status, expires_at_ms, now_ms, max_ttl_ms }
  status: 0 unknown lease, 1 extended (expires_at_ms is the new expiry, never earlier than the old),
  2 released before this call, 3 expired before this call (expires_at_ms <= now_ms), 4 the lease
  belongs to a tenant outside ARGV[3], 5 the TTL asked for is above max_ttl_ms, 6 none of the
  lease's windows is in the policy set in force (max_ttl_ms 0). Only 1 changes anything.

Why it can never give a slot back to a lease that lost it: a lease counts in a window iff its member
scores (= the record's expiry) above now (decide.lua's `conc_read`); this step refuses once the
record's expiry is <= now or the record says released, and otherwise only raises the score of a
member still present (ZADD XX GT). An expired member's units may already be someone else's; a
released one's are. The `#` total (units in flight) is untouched: an extension holds no new units.
--]]

local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end

local record = redis.call('GET', KEYS[1])
if not record then return { 0, 0, now, 0 } end
-- <expires>\n<units>\n<released at, or empty>\n<window keys, tab-separated>\n<payload>
local expires, units, released, keys, payload = string.match(record, '^(%d+)\n(%d+)\n(%d*)\n([^\n]*)\n(.*)$')
expires = tonumber(expires)
local lease = cjson.decode(payload)

if ARGV[3] ~= '' then
  local allowed = false
  if type(lease.tenant) == 'string' then
    for t in string.gmatch(ARGV[3], '[^\n]+') do
      if t == lease.tenant then allowed = true end
    end
  end
  if not allowed then return { 4, expires, now, 0 } end
end

if released ~= '' then return { 2, expires, now, 0 } end
if expires <= now then return { 3, expires, now, 0 } end

local in_force = {}
for policy, window, ttl in string.gmatch(ARGV[5], '([^\t\n]+)\t([^\t\n]+)\t(%d+)') do
  in_force[policy .. '\t' .. window] = tonumber(ttl)
end
local max_ttl = nil
for _, w in ipairs(lease.windows) do
  local ttl = in_force[w.policy .. '\t' .. w.window]
  if ttl and (not max_ttl or ttl < max_ttl) then max_ttl = ttl end
end
if not max_ttl then return { 6, expires, now, 0 } end

local ttl = max_ttl
if ARGV[4] ~= '' then ttl = tonumber(ARGV[4]) end
if ttl > max_ttl then return { 5, expires, now, max_ttl } end

-- Never shortens: a caller that wants its units back sooner releases.
local until_ms = math.max(expires, now + ttl)
if until_ms > expires then
  local member = ARGV[2] .. '|' .. units
  for key in string.gmatch(keys, '[^\t]+') do
    -- XX: a member gone with its window key (data loss) stays gone; GT: never lowers a score.
    redis.call('ZADD', key, 'XX', 'GT', until_ms, member)
    -- The set outlives its longest lease (decide.lua keeps the same rule); GT never shortens it.
    redis.call('PEXPIRE', key, until_ms - now, 'GT')
  end
  -- The record outlives the expiry by the lease TTL, as decide.lua keeps it: a late release is told
  -- "expired", not "unknown". Kept longer if it already was.
  local keep = until_ms - now + max_ttl
  local pttl = redis.call('PTTL', KEYS[1])
  if pttl > keep then keep = pttl end
  redis.call('SET', KEYS[1], string.format('%d', until_ms) .. '\n' .. units .. '\n\n' .. keys .. '\n' .. payload, 'PX', keep)
end
return { 1, until_ms, now, max_ttl }
