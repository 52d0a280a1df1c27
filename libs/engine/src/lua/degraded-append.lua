--[[ degraded-append.lua: appends one degraded decision to its shard's outbox, at most once per decision
id (see degraded-ledger.ts). The API appends a degraded decision after Redis failed it, and retries
every append whose reply it did not get; a reply lost after the write (a deadline, a dropped
connection) would otherwise append the entry a second time and the usage topic would carry it twice.

KEYS[1]  outbox stream   tally:v1:{s<N>}:outbox
KEYS[2]  append marker   tally:v1:{s<N>}:degraded:<decision id>   (string '1', expires after ARGV[4])
ARGV[1]  field p: the payload (decision id inside)
ARGV[2]  field t: the decision's time, epoch ms
ARGV[3]  field r: the window results ('[]': no script ran for the decision)
ARGV[4]  the marker's lifetime, ms: how long a retry of this decision is still recognised
Reply: 1 appended now, 0 appended before (the marker is there: nothing written).

The entry is written before the marker: if the marker's write failed (out of memory), a retry would
append a second copy, a duplicate; the other order would lose the entry to a marker without it.
Both writes are one script, so a replica or an AOF holds both or neither.
--]]

if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('XADD', KEYS[1], '*', 'p', ARGV[1], 't', ARGV[2], 'r', ARGV[3])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
return 1
