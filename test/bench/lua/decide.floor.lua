--[[ decide.floor.lua: what the bench decision cannot do without, and nothing else (the script cost
phase's lower bound for decide.lua with its guarantees; docs/adr/0008-one-hash-per-policy-key.md):
the Redis clock, the override lookup, one HMGET of the policy state hash, the bench policy's two
windows (token bucket, fixed window) computed inline, one HSET (and PEXPIRE when `_e` must grow),
the same outbox entry as decide.lua (`p`, `t`, `r`), a fixed-shape reply. Not a limiter: it assumes
the bench policy and that both windows allow. decide.lua's arguments (KEYS[3] the policy state hash,
KEYS[5] the override hash; ARGV as in libs/engine/src/lua/decide.lua).
--]]
local format = string.format
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cost = tonumber(ARGV[2])
local w_count = tonumber(ARGV[6])
local ov = redis.call('HMGET', KEYS[5], ARGV[7 + 5 * w_count + 1])
local n1, n2 = string.sub(ARGV[7], 2), string.sub(ARGV[12], 2)
local l1, p1, l2, p2 = tonumber(ARGV[8]), tonumber(ARGV[9]), tonumber(ARGV[13]), tonumber(ARGV[14])
local st = redis.call('HMGET', KEYS[3], n1, n2, '_e')
local tt, ts, b, c
if st[1] then tt, ts = string.match(st[1], '^t(%d+):(%d+)$') tt, ts = tonumber(tt), tonumber(ts) end
if st[2] then b, c = string.match(st[2], '^(%d+):(%d+)') b, c = tonumber(b), tonumber(c) end
local e = tonumber(st[3]) or 0
local capacity = l1 * p1
local level = capacity
if tt then level = math.min(capacity, tt + math.max(0, now - ts) * l1) end
local after = level - cost * p1
local bucket = math.floor(now / p2)
local count = 0
if b == bucket then count = c end
local keep = (bucket + 2) * p2
local r1, s1 = math.floor(after / p1), math.ceil((capacity - after) / l1)
local r2, s2 = l2 - count - cost, (bucket + 1) * p2 - now
local v1, v2 = format('t%d:%d', after, now), format('%d:%d', bucket, count + cost)
if keep > e then
  redis.call('HSET', KEYS[3], n1, v1, n2, v2, '_e', format('%d', keep))
  redis.call('PEXPIRE', KEYS[3], keep - now)
else
  redis.call('HSET', KEYS[3], n1, v1, n2, v2)
end
redis.call('XADD', KEYS[1], '*', 'p', ARGV[5], 't', format('%d', now), 'r', format('[{"remaining":%d,"reset_ms":%d,"would_deny":false},{"remaining":%d,"reset_ms":%d,"would_deny":false}]', r1, s1, r2, s2))
return { 1, now, 0, 0, '', r1, s1, 0, r2, s2, 0 }
