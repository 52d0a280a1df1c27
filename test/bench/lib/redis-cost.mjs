// What one side's Redis spent during a measurement, read as differences (no CONFIG RESETSTAT, so it
// also works on a Redis the bench does not own): `INFO commandstats` per command (calls, µs inside
// the command, scripts' inner commands included in EVALSHA) and the redis-server process's CPU from
// /proc (what the commands cost plus parsing, replies and the event loop).
import { cpuSnapshot, cpuSpentMs } from './proc-cpu.mjs';

function commandStats(info) {
  const stats = {};
  for (const m of info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+),usec=(\d+)/g))
    stats[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  return stats;
}

/** A reading of `redis` (an ioredis client) now; `diff(before, after)` gives what happened between. */
export async function redisReading(redis) {
  const [stats, server] = await Promise.all([redis.info('commandstats'), redis.info('server')]);
  const pid = Number(/process_id:(\d+)/.exec(server)?.[1]);
  return { commands: commandStats(stats), pid, cpu: cpuSnapshot([pid]) };
}

/** Per command `{ calls, usec }` spent between two readings, and the server process's CPU ms. */
export function redisSpent(before, after) {
  const commands = {};
  for (const [name, a] of Object.entries(after.commands)) {
    const b = before.commands[name] ?? { calls: 0, usec: 0 };
    if (a.calls > b.calls) commands[name] = { calls: a.calls - b.calls, usec: a.usec - b.usec };
  }
  const usec = Object.values(commands).reduce((sum, c) => sum + c.usec, 0);
  return { commands, commandUsec: usec, processCpuMs: cpuSpentMs(before.cpu, after.cpu), pid: after.pid };
}
