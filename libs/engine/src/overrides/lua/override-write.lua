--[[ override-write.lua: set or remove one runtime override, with its version and its index entry, in
one step (docs/semantics.md, "Overrides"), and the change's record on the shard's outbox stream in
that same step, so a change is on the ledger if and only if it happened (docs/events.md). decide.lua
reads the same hash in its own step, so a decision sees the override before or after this change,
never half of it.

KEYS (one hash-tag slot {s<N>}, built by keys.ts):
  KEYS[1]  overrides hash   tally:v1:{s<N>}:overrides        (field #seq: the shard's version counter)
  KEYS[2]  listing index    tally:v1:{s<N>}:overrides:index  (sorted set of fields, score 0)
  KEYS[3]  outbox stream    tally:v1:{s<N>}:outbox           (entry o, b, a, n, t: @tally/events override-payload.ts)
ARGV:
  ARGV[1]  'set' or 'del'
  ARGV[2]  field <policy>:<scope>:<key>
  ARGV[3]  set: `<expires_at ms or empty>;<window>=<limit>,...` (override-record.ts encodeLimits)
  ARGV[4]  set: metadata JSON object without updated_at (encodeMeta)
  ARGV[5]  the outbox entry's head JSON (`o`: id, action, policy, key, tenant, set_by, reason); empty:
           no entry (the listing's clean-up of expired overrides, which is no one's change; it
           removes nothing that is in force)
Reply: { version (0: a 'del' of an absent override, nothing written), now ms, before, after }, before
and after being stored values ('' = none). An expired override counts as absent, and goes.
--]]

-- The change's record: appended only when something changed (a version was taken).
local function record(version, now, before, after)
  if ARGV[5] == '' then return end
  redis.call('XADD', KEYS[3], '*', 'o', ARGV[5], 'b', before, 'a', after,
    'n', string.format('%.0f', version), 't', string.format('%.0f', now))
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local before = redis.call('HGET', KEYS[1], ARGV[2]) or ''
if before ~= '' then
  local expires = tonumber(string.match(before, '^%d+;(%d*);'))
  if expires and expires <= now then before = '' end
end

if ARGV[1] == 'del' then
  -- The listing's clean-up (no head) only takes what is expired or gone: an override set after the
  -- listing read the field is someone's live change, not litter, and its removal would be no one's.
  if ARGV[5] == '' and before ~= '' then return { 0, now, '', '' } end
  redis.call('HDEL', KEYS[1], ARGV[2])
  redis.call('ZREM', KEYS[2], ARGV[2])
  if before == '' then return { 0, now, '', '' } end
  local removed = redis.call('HINCRBY', KEYS[1], '#seq', 1)
  record(removed, now, before, '')
  return { removed, now, before, '' }
end

local version = redis.call('HINCRBY', KEYS[1], '#seq', 1)
local after = version .. ';' .. ARGV[3] .. '\n' .. string.sub(ARGV[4], 1, -2) .. ',"updated_at":' .. string.format('%.0f', now) .. '}'
redis.call('HSET', KEYS[1], ARGV[2], after)
redis.call('ZADD', KEYS[2], 0, ARGV[2])
record(version, now, before, after)
return { version, now, before, after }
