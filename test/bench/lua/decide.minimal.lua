--[[ decide.minimal.lua: the floor decide.lua is compared with in the hot-path bench (its script cost
phase), not a limiter: one Redis clock read, two windows read and written with their expiry, one outbox
append, a fixed reply. It takes decide.lua's arguments in the layout of one hash per window (before
docs/adr/0008-one-hash-per-policy-key.md; test/bench/lib/decide-args.mjs `decideArgsOneHashPerWindow`),
so the difference between the two is what decide.lua's rules cost.
KEYS[1] outbox stream, KEYS[3], KEYS[4] the two window hashes; ARGV[5] the outbox payload.
--]]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local a = redis.call('HMGET', KEYS[3], 'b', 'c')
local b = redis.call('HMGET', KEYS[4], 'b', 'c')
redis.call('HSET', KEYS[3], 'b', '1', 'c', tostring((tonumber(a[2]) or 0) + 1))
redis.call('PEXPIRE', KEYS[3], 2000)
redis.call('HSET', KEYS[4], 'b', '1', 'c', tostring((tonumber(b[2]) or 0) + 1))
redis.call('PEXPIRE', KEYS[4], 2000)
redis.call('XADD', KEYS[1], '*', 'p', ARGV[5])
return { 1, now, 0, 0, '', 1, 1, 0, 1, 1, 0 }
