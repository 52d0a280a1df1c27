// One measurement of the steady bench: a warmup, then the load with every process of the side read
// apart from /proc just around it (CPU µs per answered decision per process, forked workers summed
// into their primary; the broker's JIT compiler threads read apart too), the latency percentiles,
// and the relay's records per produce request.
import { round } from './load.mjs';
import {
  groupSnapshot,
  groupSpentMs,
  JIT_COMPILER_THREADS,
  machineCpuMs,
  selfAndChildrenCpuMs,
  threadsByTid,
  threadSpentByName,
} from './proc-cpu.mjs';
import { relayCounts, relayDelta } from './relay-metrics.mjs';
import { failuresOf } from './rls-report.mjs';

/** The role of the JVM broker, whose compiler threads are read apart. */
const BROKER = 'kafka broker';

/**
 * The processes of a side by role, each as root pids (children included): `server` (Tally's API,
 * primary + workers; the peer's ratelimit; the floor's primary + workers), its `redis-server`, and
 * for Tally the `relay` (unless paused), the `kafka broker` and the `projector` when it runs.
 */
export function processGroups(side, { relay = true, projector = null } = {}) {
  const p = side.pids;
  if (p.broker === undefined) return { server: [p.api], 'redis-server': [p.redis] }; // peer, floor
  const groups = { server: [p.api], 'redis-server': [p.redis] };
  if (p.relay !== null && relay) groups.relay = [p.relay];
  groups[BROKER] = [p.broker];
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
  const brokerBefore = brokerThreads(groups);
  const relayBefore = await relayCounts(relayMetricsUrl);
  const machineBefore = machineCpuMs();
  const generatorBefore = selfAndChildrenCpuMs();
  const started = performance.now();
  const result = await load(durationSeconds);
  const elapsedSeconds = (performance.now() - started) / 1000;
  const generatorAfter = selfAndChildrenCpuMs();
  const machineAfter = machineCpuMs();
  const cpuAfter = groupSnapshot(groups);
  const brokerAfter = brokerThreads(groups);
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
    broker: brokerSplit(spent, brokerBefore, brokerAfter, decisions, elapsedSeconds),
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

/** The broker's threads now (`threadsByTid`), or null on a side without a broker. */
function brokerThreads(groups) {
  const pid = groups[BROKER]?.[0];
  return pid === undefined ? null : threadsByTid(pid);
}

/**
 * The broker's CPU split: its JIT compiler threads (C1/C2, which still compile minutes into a run,
 * tens of ms per second in bursts: as much per decision as the broker's own produce work) in µs
 * per decision and in ms per second, and the rest of the broker's CPU per decision (the `cpuUs`
 * figure less the compiler's). A compiler thread that exited within the window leaves its share in
 * the rest. Null on a side without a broker.
 */
function brokerSplit(spent, before, after, decisions, seconds) {
  if (before === null || after === null) return null;
  const compilerMs = threadSpentByName(before, after)[JIT_COMPILER_THREADS] ?? 0;
  return {
    compilerMsPerSec: round(compilerMs / seconds, 1),
    compilerUs: round((compilerMs * 1000) / decisions, 1),
    withoutCompilerUs: round(((spent[BROKER] - compilerMs) * 1000) / decisions, 1),
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

/**
 * CPU ms per second of each process over `seconds` with no load at all, and of the broker's JIT
 * compiler threads (`kafka broker: compiler threads`, already in the broker's figure).
 */
export async function measureIdle(groups, seconds) {
  const before = groupSnapshot(groups);
  const brokerBefore = brokerThreads(groups);
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const elapsed = (performance.now() - started) / 1000;
  const spent = groupSpentMs(before, groupSnapshot(groups));
  const perSec = Object.fromEntries(
    Object.entries(spent).map(([name, ms]) => [name, round(ms / elapsed, 1)]),
  );
  const broker = brokerSplit(spent, brokerBefore, brokerThreads(groups), 1, elapsed);
  if (broker) perSec[`${BROKER}: compiler threads`] = broker.compilerMsPerSec;
  return perSec;
}
