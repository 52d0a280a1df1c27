--[[ decide.lua: one quota decision, atomically (DESIGN §3, docs/adr/0001-one-script-per-decision.md).

KEYS (all in one hash-tag slot {s<N>}, built by keys.ts):
  KEYS[1]        outbox stream           tally:v1:{s<N>}:outbox
  KEYS[2]        denial coalescing hash  tally:v1:{s<N>}:denials
  KEYS[2+i]      window i state key (i = 1..W): the policy key's hash for a rate window (the same key
                 for every rate window of one policy key; see "Policy state hashes")
                                         tally:v1:{s<N>}:pk:<policy>:<scope>:<key>
                 a sorted set of its own for a concurrency window
                                         tally:v1:{s<N>}:w:<policy>:<window>:<scope>:<key>
  KEYS[3+W]      idempotency record      tally:v1:{s<N>}:idem.sha256:<scope>:<digest>   (idempotency_ttl > 0)
ARGV and the reply come in sections, in this order; a repeated section comes as many times as its
count field says. algorithms/decide-layout.ts holds the same table (the encoder and the decoder use it,
the script reads its positions from the `A_…`/`R_…` constants made from it, and a test compares it with
this legend: a field line is `    <name>  <meaning>`).
ARGV:
  header:
    now             ms; '' = use the Redis clock (TIME). Tests pass a fixed value.
    cost            integer >= 0, already validated: cost <= every enforce window's limit
    idempotency_ttl ms; 0 = no idempotency key
    fingerprint     the request's fingerprint (hex)
    payload         outbox payload JSON, beginning exactly with {"v":1,"outcome":"allowed",
    window_count    W, the number of windows
  window (x window_count):
    code            the algorithm's letter followed by the window's name (`tburst`, `fdaily`): the
                    letters are the algorithm registry's (algorithms/registry.ts); n = concurrency
                    (period = lease TTL; see "Concurrency windows and leases" below)
    limit           positive integer
    period          ms
    mode            0 = enforce; k > 0 = window of the k-th shadow policy
    tag             <policy>|<key>|<reason>: the denial field without its second, for this window
    param           the algorithm's own parameter (the registry's `param`), 0 when it has none
  overrides:
    override_count  P, the applicable policies whose override is looked up (see "Overrides" below)
  override (x override_count):
    field           the policy key's field in the override hash
    first           its first window (1-based)
    count           its number of windows
  leases:
    lease_count     1 when the decision takes a lease (concurrency windows, cost > 0), else 0
  lease (x lease_count):
    id              the lease id
    payload         its release event payload
  Optional keys after the idempotency record, in this order, each only when used:
  KEYS[..]       the lease record         tally:v1:{s<N>}:lease:<decision id>   (lease_count = 1)
  KEYS[#KEYS]    the shard's override hash  tally:v1:{s<N>}:overrides                (override_count > 0)
Reply (array):
  head:
    status          0 denied, 1 allowed, 2 replayed (the stored decision; windows as stored), 3
                    idempotency conflict (no windows), 4 peek (cost 0: nothing written)
    now_ms          the decision's clock
    retry_after_ms  denials: the binding window's wait
    binding         1-based window, 0 = none
    stored          the stored decision's payload ('' unless replayed)
    window_count    the windows that follow (a replay's: those stored)
  window (x window_count):
    remaining       units left after this decision
    reset_ms        ms until the window is back to its full limit
    would_deny      0/1
  leases:
    lease_count     1 when an allowed decision took a lease (also in a replay of one), else 0
  lease (x lease_count):
    expires_ms      the lease's expiry (epoch ms)
  overrides:
    override_count  W when an override was in force (status 0, 1, 4), else 0
  override (x override_count):
    limit           the window's effective limit
    version         the version of its policy's override (0 = none)
  Remaining and limits of 2^52 and more are decimal strings, not integers (see `reply_int`).

Nothing here re-validates what TypeScript validated. The algorithms' maths are pieces, one file per
algorithm of the registry (lua/algorithms/*.lua, algorithms/registry.ts), spliced in where the
`-- @algorithms` line stands when the script is loaded; each mirrors its TypeScript in window-math.ts line by line.
--]]

-- @layout: the A_… and R_… constants (decide-layout.ts) are put here when the script is loaded

local PAYLOAD_PREFIX = '{"v":1,"outcome":"allowed",'
local DAY_MS = 86400000

local format = string.format

local function num(x)
  -- Every stored value is an integer below 2^53, which '%d' prints exactly, in half the time of
  -- tostring() (%.14g, exponent form past 1e14): docs/benchmarks.md, "decide.lua per call".
  return format('%d', x)
end

-- A count (a limit, a remaining) as a reply value the client reads exactly, up to 2^53 - 1. An
-- integer reply is decoded by ioredis digit by digit as `n * 10 + digit + 48 - 48`, whose
-- intermediate passes 2^53 above 2^53 - 58 and rounds the odd values (2^53 - 1 arrives as 2^53);
-- a string is read with Number(), exact. Below 2^52 (every usual value) the integer stays.
local BIG = 4503599627370496
local function reply_int(x)
  if x < BIG then return x end
  return format('%d', x)
end

local floor = math.floor
local ceil = math.ceil

local now
if ARGV[A_HEADER_NOW] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[A_HEADER_NOW])
end
local cost = tonumber(ARGV[A_HEADER_COST])
local idem_ttl = tonumber(ARGV[A_HEADER_IDEMPOTENCY_TTL])
local fingerprint = ARGV[A_HEADER_FINGERPRINT]
local payload = ARGV[A_HEADER_PAYLOAD]
local w_count = tonumber(ARGV[A_HEADER_WINDOW_COUNT])
-- ARGV: window i's field f is ARGV[AW + A_WINDOW_N * (i - 1) + f]; the override count comes after the
-- windows, then the overrides, then the lease count and the lease (decide-layout.ts).
local AW = A_HEADER_N
local A_OV = AW + A_WINDOW_N * w_count + A_OVERRIDES_OVERRIDE_COUNT
local ov_count = tonumber(ARGV[A_OV])
local A_LEASE = A_OV + A_OVERRIDE_N * ov_count + A_LEASES_LEASE_COUNT
-- Reply: window i's field f is reply[RW + R_WINDOW_N * (i - 1) + f].
local RW = R_HEAD_N

-- The sections after the windows: the lease (its expiry, or nil) and the overrides (an array of
-- limit, version per window, or nil), each preceded by its count.
local function reply_tail(reply, lease_expires, overrides)
  local n = #reply
  if lease_expires then
    reply[n + 1], reply[n + 2] = 1, lease_expires
    n = n + 2
  else
    reply[n + 1] = 0
    n = n + 1
  end
  if overrides then
    reply[n + 1] = #overrides / R_OVERRIDE_N
    for k = 1, #overrides do reply[n + 1 + k] = overrides[k] end
  else
    reply[n + 1] = 0
  end
  return reply
end

-- Idempotency replay comes first: a retried request gets the stored decision and consumes nothing.
local idem_key = nil
if idem_ttl > 0 and cost > 0 then
  idem_key = KEYS[3 + w_count]
  local stored = redis.call('GET', idem_key)
  if stored then
    local nl1 = string.find(stored, '\n', 1, true)
    local nl2 = string.find(stored, '\n', nl1 + 1, true)
    if string.sub(stored, 1, nl1 - 1) ~= fingerprint then
      return { 3, now, 0, 0, '', 0, 0, 0 }
    end
    -- Rewrites the record's own expiry (unchanged): a write, so it is replicated and durable mode's
    -- WAIT, which covers what this connection wrote, covers the stored decision this replay answers
    -- for, even when another connection (another worker) wrote it and the replica lags behind.
    -- (A record always has one; without it, PEXPIREAT -1 would delete it, so none is written.)
    local expires = redis.call('PEXPIRETIME', idem_key)
    if expires > 0 then redis.call('PEXPIREAT', idem_key, expires) end
    -- The record holds the windows' values, then the lease's expiry when the decision took one
    -- (its own format, older than the reply's counts: the odd value out is the expiry).
    local values = cjson.decode(string.sub(stored, nl1 + 1, nl2 - 1))
    local stored_w = floor(#values / R_WINDOW_N)
    local reply = { 2, now, 0, 0, string.sub(stored, nl2 + 1), stored_w }
    for k = 1, stored_w * R_WINDOW_N do reply[RW + k] = reply_int(values[k]) end
    return reply_tail(reply, values[stored_w * R_WINDOW_N + 1], nil)
  end
end

-- The algorithms, by their letter (the first character of a window's `code`): their pieces
-- (lua/algorithms/*.lua, listed by algorithms/registry.ts) are spliced in below as
--   alg_read(alg, v) -> s1, s2, s3: a stored value as numbers (nil when not this algorithm's shape);
--   alg_eval(alg, limit, period, param, s1, s2, s3, cost) -> allowed, remaining, reset_ms, retry_ms,
--     keep, x, y, z (see evaluate() below);
--   alg_pack(alg, x, y, z) -> the stored value; ALG_SLACK[alg]: periods the hash is kept past keep.
-- One function per step with a branch per algorithm, not a table of closures: the script runs its
-- whole text on every call, and a closure per algorithm would be made (and collected) every time.
-- Concurrency ('n') is the section "Concurrency windows and leases" of this frame.
-- @algorithms: the pieces (lua/algorithms/*.lua, listed by algorithms/registry.ts) are put here

-- ===== Policy state hashes (docs/adr/0008-one-hash-per-policy-key.md) ==========================
-- The rate windows of one policy key share one hash (KEYS[2+i] is the same key for each of them): one
-- HMGET reads them all, one HSET writes them back. Fields:
--   <window name>  the window's state, packed as its algorithm's piece writes it (`alg_pack`) and
--                  reads it (`alg_read`: a value of another shape reads as no state)
--   _e             until when (epoch ms, the script's clock) the hash is kept: its expiry as last set
--                  (`_` never begins a window name)
-- A window's state must outlive its use (`keep`, from evaluate()); PEXPIRE runs only when some window
-- needs the hash past `_e`, which a counter does once per bucket and a token bucket once per period
-- (it is then kept a period longer than it needs: the piece's slack, which spares the other writes).

-- ===== Fast path (docs/adr/0008-one-hash-per-policy-key.md) =====================================
-- The usual decision in the fewest steps: cost > 0, no idempotency key, every window a rate window
-- of one policy key (one state hash), no override stored for it, and every window allows. It commits
-- what the general path below would (every window, shadow ones too: none would deny), with the same
-- reply and outbox entry, before the general path's closures and tables are even made: Lua time is
-- most of the script's Redis time (docs/benchmarks.md, "decide.lua per call"). The maths is the
-- pieces' (the same functions as the general path's); the parity test walks both paths against
-- window-math.ts.
-- When a window denies, "Fast path, denied" (after evaluate()) answers an enforce policy's denial;
-- anything else falls through to the general path. Both reuse the reads made here (FAST_OV, FAST_ST),
-- and nothing is written before a fall-through.
local FAST_OV, FAST_ST, FAST_NAMES = nil, nil, nil
if cost > 0 and idem_ttl == 0 and w_count > 0 then
  local key, names = KEYS[3], {}
  local fast = true
  for i = 1, w_count do
    local code = ARGV[AW + A_WINDOW_N * (i - 1) + A_WINDOW_CODE]
    if KEYS[2 + i] ~= key or string.byte(code) == 110 then -- another key, or 'n' (a concurrency window)
      fast = false
      break
    end
    names[i] = string.sub(code, 2)
  end
  if fast and ov_count > 1 then fast = false end
  if fast and ov_count == 1 then
    FAST_OV = redis.call('HMGET', KEYS[#KEYS], ARGV[A_OV + A_OVERRIDE_FIELD])
    if FAST_OV[1] then fast = false end
  end
  local values
  if fast then
    names[w_count + 1] = '_e'
    values = redis.call('HMGET', key, unpack(names))
    FAST_ST, FAST_NAMES = values, names
  end
  local writes, reply, results = {}, { 1, now, 0, 0, '', w_count }, {}
  local need, keep_to = 0, 0
  for i = 1, fast and w_count or 0 do
    local a = AW + A_WINDOW_N * (i - 1)
    local alg = string.sub(ARGV[a + A_WINDOW_CODE], 1, 1)
    local period = tonumber(ARGV[a + A_WINDOW_PERIOD])
    local s1, s2, s3
    if values[i] then s1, s2, s3 = alg_read(alg, values[i]) end
    local ok, remaining, reset_ms, _, keep, x, y, z =
      alg_eval(alg, tonumber(ARGV[a + A_WINDOW_LIMIT]), period, tonumber(ARGV[a + A_WINDOW_PARAM]), s1, s2, s3, cost)
    if not ok then
      fast = false
      break
    end
    local value, until_ms = alg_pack(alg, x, y, z), keep + ALG_SLACK[alg] * period
    if keep > need then need = keep end
    if until_ms > keep_to then keep_to = until_ms end
    writes[2 * i - 1], writes[2 * i] = names[i], value
    -- `reply_int`, inlined: the fast path spares itself a call per window
    local r = RW + R_WINDOW_N * (i - 1)
    reply[r + R_WINDOW_REMAINING], reply[r + R_WINDOW_RESET_MS], reply[r + R_WINDOW_WOULD_DENY] =
      remaining < BIG and remaining or num(remaining), reset_ms, 0
    results[i] = format('{"remaining":%d,"reset_ms":%d,"would_deny":false}', remaining, reset_ms)
  end
  if fast then
    if need > (tonumber(values[w_count + 1]) or 0) then
      writes[2 * w_count + 1], writes[2 * w_count + 2] = '_e', num(keep_to)
      redis.call('HSET', key, unpack(writes))
      redis.call('PEXPIRE', key, math.max(1, keep_to - now))
    else
      redis.call('HSET', key, unpack(writes))
    end
    redis.call('XADD', KEYS[1], '*', 'p', payload, 't', num(now), 'r', '[' .. table.concat(results, ',') .. ']')
    -- no lease (no concurrency window), no override (none stored): both counts 0
    reply[#reply + 1], reply[#reply + 2] = 0, 0
    return reply
  end
end
-- ===== end of fast path ==========================================================================

-- ===== Concurrency windows and leases (algorithm 'n') =====================================
-- A concurrency window's key (KEYS[2+i]) is a sorted set: one member `<lease id>|<units>` per lease,
-- scored by its expiry (ms), and the member `#` scored minus the units in flight (never > 0, so the
-- expiry range `(0, now]` never holds it, and one range read `[-inf, now]` returns `#` and every
-- expired lease). A lease expired by `now` no longer counts, whether or not it was removed yet:
-- evaluation discounts it, the next commit removes it and writes `#` without it in the same step, or a
-- release removes it (ZREM) and adds its units back: exactly one of them finds it.
-- A decision with concurrency windows (and cost > 0) also passes its lease record (after the
-- idempotency record, before the override hash), and after the override section's ARGV: the lease
-- id, the release event payload. The
-- record is one string (one SET with its expiry): `<expires>\n<units>\n<released at, or empty>\n
-- <window keys, tab-separated>\n<payload>` (release.lua reads it).
-- The lease lasts the shortest lease TTL (period) among the decision's concurrency windows.
local lease_ttl = nil
local lease_keys = nil
-- Where the lease's key is: the override hash is the last key when there is one, so the record is
-- the key before it (its id and payload are the ARGV section `lease`, at A_LEASE).
local lease_record = #KEYS - (ov_count > 0 and 1 or 0)
for i = 1, w_count do
  local a = AW + A_WINDOW_N * (i - 1)
  if string.sub(ARGV[a + A_WINDOW_CODE], 1, 1) == 'n' then
    local p = tonumber(ARGV[a + A_WINDOW_PERIOD])
    if not lease_ttl or p < lease_ttl then lease_ttl = p end
  end
end

local function lease_units(member)
  return tonumber(string.match(member, '|(%d+)$')) or 0
end

-- Reads one concurrency window: units in flight (live leases), units of expired leases not yet
-- removed, and { reset_ms (until every live lease has expired), retry_ms (until enough live leases
-- have expired for `cost` to fit; 0 when it fits), the latest expiry }.
local function conc_read(key, limit)
  local total, expired = 0, 0
  local head = redis.call('ZRANGEBYSCORE', key, '-inf', now, 'WITHSCORES')
  for j = 1, #head, 2 do
    if head[j] == '#' then total = -tonumber(head[j + 1]) else expired = expired + lease_units(head[j]) end
  end
  local inflight = total - expired
  local reset, retry, last = 0, 0, 0
  if inflight > 0 then
    local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    if top[2] then last = tonumber(top[2]) end
    reset = math.max(0, last - now)
    local need = inflight + cost - limit
    if need > 0 then
      -- Each lease holds at least one unit: `need` members are always enough to look at.
      local live = redis.call('ZRANGEBYSCORE', key, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, need)
      retry = reset
      for j = 1, #live, 2 do
        need = need - lease_units(live[j])
        if need <= 0 then
          retry = math.max(1, tonumber(live[j + 1]) - now)
          break
        end
      end
    end
  end
  return inflight, expired, { reset, retry, last }
end

-- The window's verdict, shaped like evaluate()'s: no ttl (conc_commit sets the key's own expiry).
local function conc_evaluate(limit, inflight, times, c)
  if inflight + c > limit then
    return false, math.max(0, limit - inflight), times[1], times[2], nil
  end
  local reset = times[1]
  if c > 0 and reset < lease_ttl then reset = lease_ttl end
  return true, limit - inflight - c, reset, 0, nil
end

-- Takes the lease's units in one window (allowed decisions only), reclaiming expired leases: the new
-- lease and the new `#` in one ZADD.
local function conc_commit(key, inflight, expired, times)
  if expired > 0 then redis.call('ZREMRANGEBYSCORE', key, '(0', now) end
  local expires = now + lease_ttl
  redis.call('ZADD', key, expires, ARGV[A_LEASE + A_LEASE_ID] .. '|' .. num(cost), num(-(inflight + cost)), '#')
  -- The set outlives its longest lease (a reload may have shortened the TTL since an older one).
  redis.call('PEXPIRE', key, math.max(expires, times[3]) - now)
  lease_keys = lease_keys or {}
  lease_keys[#lease_keys + 1] = key
end

-- After an allowed commit: writes the lease record and returns the lease's expiry for the reply (the
-- idempotency record stores it with the windows, so a replay answers the same lease); nil without one.
local function lease_finish()
  if not lease_keys then return nil end
  local expires = now + lease_ttl
  -- Kept one TTL past the expiry: a late release is told "expired", not "unknown".
  redis.call('SET', KEYS[lease_record], num(expires) .. '\n' .. num(cost) .. '\n\n' .. table.concat(lease_keys, '\t')
    .. '\n' .. ARGV[A_LEASE + A_LEASE_PAYLOAD], 'PX', 2 * lease_ttl)
  return expires
end
-- ===== end of concurrency windows and leases ===================================================

-- Evaluate one window without writing. Returns allowed, remaining, reset_ms, retry_ms, keep (until when,
-- epoch ms, its state must be kept: see "Policy state hashes") and the values to write on commit (x,
-- y, z: what the piece's `alg_pack` takes), as plain return values: this runs for every window of every
-- decision, and a table per window is garbage the script's Lua GC pays for on later calls
-- (docs/benchmarks.md, "decide.lua per call").
-- Shared meaning: remaining is what is left after this decision (after the commit when allowed);
-- reset_ms is the time until the window is back to its full limit; retry_ms (denials) the earliest
-- wait after which the same cost fits, exact and never early.
-- s1..s3: the window's stored fields as numbers (or nil), as the piece's `read` returns them.
local function evaluate(alg, limit, period, param, s1, s2, s3, cost)
  if alg == 'n' then return conc_evaluate(limit, s1, s3, cost) end
  return alg_eval(alg, limit, period, param, s1, s2, s3, cost)
end


-- ===== Fast path, denied (docs/adr/0008-one-hash-per-policy-key.md) ============================
-- Where the allowed fast path above fell through because a window denies, an enforce policy's
-- denial is answered here as the general path answers it (nothing written, the windows that would
-- have allowed report their state untouched, the denial counted per second, key and reason), with
-- evaluate() and the reads the fast path made, without the general path's tables per window. A
-- shadow policy that would deny goes on to the general path (it commits nothing and allows).
if FAST_ST and ARGV[AW + A_WINDOW_MODE] == '0' then -- the mode of window 1, that of its one policy
  local values = FAST_ST
  local reply, binding, binding_retry = { 0, now, 0, 0, '', w_count }, 0, -1
  for i = 1, w_count do
    local a = AW + A_WINDOW_N * (i - 1)
    local alg, limit, period, param = string.sub(ARGV[a + A_WINDOW_CODE], 1, 1), tonumber(ARGV[a + A_WINDOW_LIMIT]),
      tonumber(ARGV[a + A_WINDOW_PERIOD]), tonumber(ARGV[a + A_WINDOW_PARAM])
    local s1, s2, s3
    if values[i] then s1, s2, s3 = alg_read(alg, values[i]) end
    local ok, remaining, reset_ms, retry = evaluate(alg, limit, period, param, s1, s2, s3, cost)
    if ok then
      -- Allowed alone, not committed: its state as it is (cost 0).
      local _, left, reset = evaluate(alg, limit, period, param, s1, s2, s3, 0)
      remaining, reset_ms = left, reset
    elseif retry > binding_retry then
      -- The binding window is the denying one with the longest wait, as in the general path.
      binding, binding_retry = i, retry
    end
    local r = RW + R_WINDOW_N * (i - 1)
    reply[r + R_WINDOW_REMAINING], reply[r + R_WINDOW_RESET_MS], reply[r + R_WINDOW_WOULD_DENY] =
      remaining, reset_ms, ok and 0 or 1
  end
  if binding > 0 then
    local field = floor(now / 1000) .. '|' .. ARGV[AW + A_WINDOW_N * (binding - 1) + A_WINDOW_TAG]
    local reason = string.match(field, '|([^|]*)$')
    if redis.call('HINCRBY', KEYS[2], field, 1) == 1 then
      -- The sample's window results, as the outbox `r` (only the first denial of a second needs them).
      local views = {}
      for i = 1, w_count do
        local r = RW + R_WINDOW_N * (i - 1)
        views[i] = format('{"remaining":%d,"reset_ms":%d,"would_deny":%s}', reply[r + R_WINDOW_REMAINING],
          reply[r + R_WINDOW_RESET_MS], reply[r + R_WINDOW_WOULD_DENY] == 1 and 'true' or 'false')
      end
      redis.call('HSET', KEYS[2],
        field .. '#p', '{"v":1,"outcome":"denied","reason":"' .. reason .. '",' .. string.sub(payload, #PAYLOAD_PREFIX + 1),
        field .. '#r', '[' .. table.concat(views, ',') .. ']')
    end
    reply[R_HEAD_RETRY_AFTER_MS], reply[R_HEAD_BINDING] = binding_retry, binding
    return reply_tail(reply, nil, nil)
  end
end
-- ===== end of fast path, denied ==================================================================

-- ===== Policy state hashes, general path (the legend is above the fast path) ====================
-- Groups: the rate windows of one policy key are consecutive (the plan lists a policy's windows
-- together), so a group begins where a rate window's key differs from the previous rate window's.
-- Per group g: SK[g] its key, SF[g] its fields, SV[g] their values (HMGET), SE[g] its stored `_e`;
-- per rate window i: SG[i] its group, SP[i] its position in the group's fields.
-- After the fast path fell through (a denial, mostly), it has read the only group: SG is nil and
-- window i is the group's field i (no second pass over the windows on the way to a denial).
local SK, SF, SV, SE, SG, SP = {}, {}, {}, {}, nil, nil
if FAST_ST then
  SK[1], SF[1], SV[1], SE[1] = KEYS[3], FAST_NAMES, FAST_ST, tonumber(FAST_ST[w_count + 1]) or 0
else
  SG, SP = {}, {}
  local g, last = 0, nil
  for i = 1, w_count do
    local code = ARGV[AW + A_WINDOW_N * (i - 1) + A_WINDOW_CODE]
    if string.byte(code) ~= 110 then -- not 'n': a concurrency window's sorted set is conc_read's
      local key = KEYS[2 + i]
      if key ~= last then
        g, last = g + 1, key
        SK[g], SF[g] = key, {}
      end
      local fields = SF[g]
      local n = #fields + 1
      fields[n] = string.sub(code, 2)
      SG[i], SP[i] = g, n
    end
  end
  for h = 1, g do
    local fields = SF[h]
    local n = #fields + 1
    fields[n] = '_e'
    local values = redis.call('HMGET', SK[h], unpack(fields))
    SV[h], SE[h] = values, tonumber(values[n]) or 0
  end
end

-- Window i's stored state as numbers (nil when absent): s1, s2, s3 of evaluate().
local function state_of(i, alg)
  local v
  if SG then v = SV[SG[i]][SP[i]] else v = SV[1][i] end
  if not v then return nil end
  return alg_read(alg, v)
end

-- Per group: HSET arguments, the latest `keep` of its windows, and the expiry to set if that is past _e.
local SW, SN, SX = {}, {}, {}
local function state_put(i, alg, period, keep, x, y, z)
  local g, pos = 1, i
  if SG then g, pos = SG[i], SP[i] end
  -- One format() per value (the piece's `pack`): formatting numbers is most of a write's Lua time.
  local value = alg_pack(alg, x, y, z)
  local w = SW[g]
  if w then
    w[#w + 1], w[#w + 2] = SF[g][pos], value
  else
    SW[g] = { SF[g][pos], value }
  end
  local until_ms = keep + ALG_SLACK[alg] * period
  if not SN[g] or keep > SN[g] then SN[g] = keep end
  if not SX[g] or until_ms > SX[g] then SX[g] = until_ms end
end

local function state_flush()
  for g = 1, #SK do
    local w = SW[g]
    if w then
      if SN[g] > SE[g] then
        w[#w + 1], w[#w + 2] = '_e', num(SX[g])
        redis.call('HSET', SK[g], unpack(w))
        redis.call('PEXPIRE', SK[g], math.max(1, SX[g] - now))
      else
        redis.call('HSET', SK[g], unpack(w))
      end
    end
  end
end
-- ===== end of policy state hashes ===============================================================

-- ── Overrides ─────────────────────────────────────────────────────────────────────────────────────
-- Runtime limits set through the admin API (docs/semantics.md, "Overrides"), stored per shard in one
-- hash beside the windows (same slot) and read here, in the same step as the windows: a decision sees
-- an override whole or not at all. Field `<policy>:<scope>:<key>`, value
-- `<version>;<expires_at ms, or empty>;<window>=<limit>,...` then a newline and the metadata JSON,
-- which this script never reads. A limit of 0 anywhere blocks the key: every window of the policy
-- denies with the reason `blocked`. An expired override is ignored, and removed by a decision that
-- writes (a peek writes nothing).
-- ARGV: the override count P (0: no lookup at all), then per applicable policy: field, first window, count.
local OV, OV_VERSION, OV_BLOCK = nil, nil, nil
-- A block without expiry: retry_after_ms of a day (lifting it takes a person, not a wait).
local OV_BLOCK_RETRY_MS = DAY_MS
do
  local p = ov_count
  if p > 0 then
    local ov_key = KEYS[#KEYS]
    local fields = {}
    for j = 1, p do fields[j] = ARGV[A_OV + A_OVERRIDE_N * (j - 1) + A_OVERRIDE_FIELD] end
    local values = FAST_OV or redis.call('HMGET', ov_key, unpack(fields)) -- read by the fast path
    for j = 1, p do
      local v = values[j]
      if v then
        local version, expires, limits = string.match(v, '^(%d+);(%d*);([^\n]*)')
        expires = tonumber(expires)
        if expires and expires <= now then
          if cost > 0 then redis.call('HDEL', ov_key, fields[j]) end
        else
          OV, OV_VERSION = OV or {}, OV_VERSION or {}
          local list = ',' .. limits .. ','
          local blocked = string.find(list, '=0,', 1, true) ~= nil
          local o = A_OV + A_OVERRIDE_N * (j - 1)
          local first, count = tonumber(ARGV[o + A_OVERRIDE_FIRST]), tonumber(ARGV[o + A_OVERRIDE_COUNT])
          for i = first, first + count - 1 do
            OV_VERSION[i] = tonumber(version)
            if blocked then
              OV[i] = 0
              OV_BLOCK = OV_BLOCK or {}
              if expires then OV_BLOCK[i] = expires - now else OV_BLOCK[i] = OV_BLOCK_RETRY_MS end
            else
              -- The window's name, after its algorithm's letter (ARGV legend).
              local name = string.sub(ARGV[AW + A_WINDOW_N * (i - 1) + A_WINDOW_CODE], 2)
              local at = string.find(list, ',' .. name .. '=', 1, true)
              if at then OV[i] = tonumber(string.match(list, '^(%d+)', at + #name + 2)) end
            end
          end
        end
      end
    end
  end
end

-- The reply's override section when an override was in force: per window its effective limit and
-- version (nil when none was).
local function ov_reply()
  if not OV_VERSION then return nil end
  local out = {}
  for i = 1, w_count do
    out[2 * i - 1] = reply_int(OV[i] or tonumber(ARGV[AW + A_WINDOW_N * (i - 1) + A_WINDOW_LIMIT]))
    out[2 * i] = OV_VERSION[i] or 0
  end
  return out
end

-- The extra fields of window i in the outbox `r` (and the denial sample): `limit` when overridden,
-- `override` (the version) when its policy had one; '' otherwise, so entries without stay as they were.
local function ov_result_json(i)
  if not (OV_VERSION and OV_VERSION[i]) then return '' end
  local s = ',"override":' .. num(OV_VERSION[i])
  if OV[i] then s = s .. ',"limit":' .. num(OV[i]) end
  return s
end
-- ── end of Overrides ──────────────────────────────────────────────────────────────────────────────


-- Evaluate every window before writing anything. Per window i, flat in `R` at 11(i-1) + 1..11 (one
-- table for the whole decision): alg, limit, period, mode, s1, s2, s3, ok, remaining, reset, param; and in
-- `W` at 4(i-1) + 1..4 what commit writes: keep, x, y, z.
local R, W = {}, {}
local denied_enforced = false
local shadow_denied = nil
local binding, binding_retry = 0, -1
for i = 1, w_count do
  local a = AW + A_WINDOW_N * (i - 1)
  local alg, limit, period, mode = string.sub(ARGV[a + A_WINDOW_CODE], 1, 1), tonumber(ARGV[a + A_WINDOW_LIMIT]),
    tonumber(ARGV[a + A_WINDOW_PERIOD]), tonumber(ARGV[a + A_WINDOW_MODE])
  local param = tonumber(ARGV[a + A_WINDOW_PARAM])
  if OV and OV[i] then limit = OV[i] end -- an override's limit (section "Overrides")
  local s1, s2, s3
  if alg == 'n' then
    s1, s2, s3 = conc_read(KEYS[2 + i], limit)
  else
    s1, s2, s3 = state_of(i, alg) -- read by the section "Policy state hashes"
  end
  local ok, remaining, reset_ms, retry, keep, x, y, z
  if OV_BLOCK and OV_BLOCK[i] then
    -- Blocked by an override: denies whatever the state, until the block expires or is removed.
    ok, remaining, reset_ms, retry = false, 0, 0, OV_BLOCK[i]
  else
    ok, remaining, reset_ms, retry, keep, x, y, z = evaluate(alg, limit, period, param, s1, s2, s3, cost)
  end
  local r = 11 * (i - 1)
  R[r + 1], R[r + 2], R[r + 3], R[r + 4], R[r + 5], R[r + 6], R[r + 7], R[r + 8], R[r + 9], R[r + 10], R[r + 11] =
    alg, limit, period, mode, s1, s2, s3, ok, remaining, reset_ms, param
  local wi = 4 * (i - 1)
  W[wi + 1], W[wi + 2], W[wi + 3], W[wi + 4] = keep, x, y, z
  if not ok then
    if mode == 0 then
      denied_enforced = true
      -- The binding window is the denying one with the longest wait: retrying earlier is pointless.
      if retry > binding_retry then binding, binding_retry = i, retry end
    else
      shadow_denied = shadow_denied or {}
      shadow_denied[mode] = true
    end
  end
end

-- Appends remaining, reset_ms, would_deny (0/1) of every window to `reply`.
local function reply_windows(reply)
  local n = #reply
  for i = 1, w_count do
    local r = 11 * (i - 1)
    reply[n + R_WINDOW_REMAINING], reply[n + R_WINDOW_RESET_MS] = reply_int(R[r + 9]), R[r + 10]
    if R[r + 8] then reply[n + R_WINDOW_WOULD_DENY] = 0 else reply[n + R_WINDOW_WOULD_DENY] = 1 end
    n = n + R_WINDOW_N
  end
  return reply
end

-- A window that allowed but is not committed reports its state as it is (its cost-0 view).
local function uncommitted(i)
  local r = 11 * (i - 1)
  local _, remaining, reset_ms = evaluate(R[r + 1], R[r + 2], R[r + 3], R[r + 11], R[r + 5], R[r + 6], R[r + 7], 0)
  R[r + 9], R[r + 10] = remaining, reset_ms
end

-- The outbox `r` field: [{"remaining":n,"reset_ms":n,"would_deny":bool}] in window order (built by
-- hand: cjson would encode an empty list as {}).
local function window_results_json()
  local s = '['
  for i = 1, w_count do
    local r = 11 * (i - 1)
    if i > 1 then s = s .. ',' end
    s = s .. format('{"remaining":%d,"reset_ms":%d,"would_deny":%s%s}', R[r + 9], R[r + 10],
      R[r + 8] and 'false' or 'true', ov_result_json(i))
  end
  return s .. ']'
end

if cost == 0 then
  return reply_tail(reply_windows({ 4, now, 0, 0, '', w_count }), nil, ov_reply())
end

if denied_enforced and OV_BLOCK then
  -- A blocked enforce window binds (its reason is the answer), waiting at least as long as any other.
  for i = 1, w_count do
    if OV_BLOCK[i] and R[11 * (i - 1) + 4] == 0 then
      binding, binding_retry = i, math.max(binding_retry, OV_BLOCK[i])
      break
    end
  end
end

if denied_enforced then
  -- Nothing is committed: windows that would have allowed report their state untouched too.
  for i = 1, w_count do
    if R[11 * (i - 1) + 8] then uncommitted(i) end
  end
  -- A denial consumes nothing anywhere and stores no idempotency record; it is only counted, coalesced
  -- per second, key and reason, with the first denial's payload (#p) and window results (#r) as the
  -- sample for the audit trail.
  local field = floor(now / 1000) .. '|' .. ARGV[AW + A_WINDOW_N * (binding - 1) + A_WINDOW_TAG]
  if OV_BLOCK and OV_BLOCK[binding] then field = string.gsub(field, '|[^|]*$', '|blocked') end
  local reason = string.match(field, '|([^|]*)$')
  if redis.call('HINCRBY', KEYS[2], field, 1) == 1 then
    redis.call('HSET', KEYS[2],
      field .. '#p', '{"v":1,"outcome":"denied","reason":"' .. reason .. '",' .. string.sub(payload, #PAYLOAD_PREFIX + 1),
      field .. '#r', window_results_json())
  end
  return reply_tail(reply_windows({ 0, now, binding_retry, binding, '', w_count }), nil, ov_reply())
end

-- Commit. A shadow policy commits only if all of its windows allow: it simulates enforcement exactly
-- (an enforced policy that denies consumes nothing from any of its windows), but it never denies.
for i = 1, w_count do
  local r, wi = 11 * (i - 1), 4 * (i - 1)
  local mode = R[r + 4]
  if mode == 0 or not (shadow_denied and shadow_denied[mode]) then
    if R[r + 1] == 'n' then
      conc_commit(KEYS[2 + i], R[r + 5], R[r + 6], R[r + 7])
    else
      state_put(i, R[r + 1], R[r + 3], W[wi + 1], W[wi + 2], W[wi + 3], W[wi + 4])
    end
  elseif R[r + 8] then
    -- Allowed by itself but not committed (its shadow policy would deny): report it untouched.
    uncommitted(i)
  end
end
state_flush()

local reply = reply_windows({ 1, now, 0, 0, '', w_count })
local lease_expires = lease_finish()
if idem_key then
  -- The windows (then the lease's expiry) as a JSON array of integers, by hand: cjson writes numbers
  -- with 14 digits (1e14 and up lose their last digits), and `reply_int` made the largest strings.
  local windows = {}
  for k = RW + 1, #reply do windows[k - RW] = num(tonumber(reply[k])) end
  if lease_expires then windows[#windows + 1] = num(lease_expires) end
  redis.call('SET', idem_key, fingerprint .. '\n[' .. table.concat(windows, ',') .. ']\n' .. payload, 'PX', idem_ttl)
end
redis.call('XADD', KEYS[1], '*', 'p', payload, 't', num(now), 'r', window_results_json())
return reply_tail(reply, lease_expires, ov_reply())
