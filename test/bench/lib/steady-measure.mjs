// One measurement of the steady bench: a warmup, then the load with every process of the side read
// apart from /proc just around it (CPU µs per answered decision per process, forked workers summed
// into their primary), the latency percentiles, and the relay's records per produce request.
import { round } from './load.mjs';
import { groupSnapshot, groupSpentMs, machineCpuMs, selfAndChildrenCpuMs } from './proc-cpu.mjs';
import { relayCounts, relayDelta } from './relay-metrics.mjs';
import { failuresOf } from './rls-report.mjs';

/**
 * The processes of a side by role, each as root pids (children included): `server` (Tally's API,
 * primary + workers; the peer's ratelimit), its `redis-server`, and for Tally the `relay` (unless
 * paused), the `kafka broker` and the `projector` when it runs.
 */
export function processGroups(side, { relay = true, projector = null } = {}) {
  const p = side.pids;
  if (side.name === 'peer') return { server: [p.api], 'redis-server': [p.redis] };
  const groups = { server: [p.api], 'redis-server': [p.redis] };
  if (p.relay !== null && relay) groups.relay = [p.relay];
  groups['kafka broker'] = [p.broker];
  if (projector !== null) groups.projector = [projector];
  return groups;
}

/**
 * `load(seconds)` for `warmupSeconds` (thrown away), then for `durationSeconds`, measured.
 * `groups`: from `processGroups`; `relayMetricsUrl`: the relay's /metrics, or null.
 */
export async function measureSteady({ load, groups, relayMetricsUrl, warmupSeconds, durationSeconds }) {
  if (warmupSeconds > 0) await load(warmupSeconds);
  const cpuBefore = groupSnapshot(groups);
  const relayBefore = await relayCounts(relayMetricsUrl);
  const machineBefore = machineCpuMs();
  const generatorBefore = selfAndChildrenCpuMs();
  const started = performance.now();
  const result = await load(durationSeconds);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const generatorAfter = selfAndChildrenCpuMs();
  const machineAfter = machineCpuMs();
  const cpuAfter = groupSnapshot(groups);
  const relay = relayDelta(relayBefore, await relayCounts(relayMetricsUrl));
  const decisions = Math.max(1, result.ok);
  const spent = groupSpentMs(cpuBefore, cpuAfter);
  const cpuUs = Object.fromEntries(
    Object.entries(spent).map(([name, ms]) => [name, round((ms * 1000) / decisions, 1)]),
  );
  return {
    okPerSec: result.okPerSec,
    ok: result.ok,
    // Refused or failed answers; calls ghz cut when its duration ended are no answer, counted apart.
    ...failuresOf(result),
    latencyMs: result.latencyMs,
    cpuUs,
    totalCpuUs: round(
      Object.values(cpuUs).reduce((a, b) => a + b, 0),
      1,
    ),
    relay: { ...relay, perDecision: relay.published === null ? null : round(relay.published / decisions, 2) },
    loadAvg1m: result.loadAvg1m,
    machine: machineShare({
      spent,
      machineBefore,
      machineAfter,
      generatorBefore,
      generatorAfter,
      elapsedSeconds,
    }),
  };
}

/**
 * Where the machine's CPU went during a measurement, in ms per second of wall time: the side's
 * processes, the load generator (autocannon in this process, or ghz, a child that has exited), and
 * everything else (other work on a shared machine, a process of the bench that should be idle); and
 * the cores left idle. A saturation round with a busy "other" or a generator near one core measured
 * the machine or the generator, not the side.
 */
function machineShare({
  spent,
  machineBefore,
  machineAfter,
  generatorBefore,
  generatorAfter,
  elapsedSeconds,
}) {
  if (machineBefore === null || machineAfter === null || generatorBefore === null || generatorAfter === null)
    return null;
  const perSec = (ms) => round(ms / elapsedSeconds);
  const side = Object.values(spent).reduce((a, b) => a + b, 0);
  const generator = generatorAfter - generatorBefore;
  const busy = machineAfter.busy - machineBefore.busy;
  const total = machineAfter.total - machineBefore.total;
  return {
    sideMsPerSec: perSec(side),
    generatorMsPerSec: perSec(generator),
    otherMsPerSec: perSec(Math.max(0, busy - side - generator)),
    idleMsPerSec: perSec(total - busy),
  };
}

/** CPU ms per second of each process over `seconds` with no load at all. */
export async function measureIdle(groups, seconds) {
  const before = groupSnapshot(groups);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = (performance.now() - started) / 1000;
  const spent = groupSpentMs(before, groupSnapshot(groups));
  return Object.fromEntries(Object.entries(spent).map(([name, ms]) => [name, round(ms / elapsed, 1)]));
}
