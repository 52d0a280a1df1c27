// CPU time of the processes of one side of a comparison, from /proc/<pid>/stat (Linux): user + system
// of each process, its threads included (a Go runtime's, V8's GC threads). A decision API with workers
// is a primary and its forked workers, so a side is given as root pids and their children are found
// at every reading (a worker restarted mid-run is still counted from then on). Elsewhere (no /proc)
// every figure is null rather than a guess.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

let ticksPerSecond;
/** USER_HZ: the unit of utime/stime (100 on every Linux this runs on, asked rather than assumed). */
function hz() {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** `{ ppid, cpuMs }` of a process, or null when it is gone. */
function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted after its last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    return { ppid: Number(fields[1]), cpuMs: (ticks * 1000) / hz() };
  } catch {
    return null;
  }
}

/** The pids whose parent is `pid` (one level: the API's workers). */
export function childrenOf(pid) {
  const children = [];
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return children;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const s = stat(entry);
    if (s?.ppid === pid) children.push(Number(entry));
  }
  return children;
}

/** Every pid of a side: the roots and their children. */
export function sidePids(roots) {
  return roots.flatMap((pid) => [pid, ...childrenOf(pid)]);
}

/** CPU ms per pid of the side, now. */
export function cpuSnapshot(roots) {
  const snapshot = new Map();
  for (const pid of sidePids(roots)) {
    const s = stat(pid);
    if (s) snapshot.set(pid, s.cpuMs);
  }
  return snapshot;
}

/** CPU ms spent between two snapshots, summed over the side (a process absent before counts from 0). */
export function cpuSpentMs(before, after) {
  let total = 0;
  for (const [pid, ms] of after) total += ms - (before.get(pid) ?? 0);
  return total;
}

/** A snapshot per named group of roots (`{ relay: [pid], api: [primary] }`), each with its children. */
export function groupSnapshot(groups) {
  return Object.fromEntries(Object.entries(groups).map(([name, roots]) => [name, cpuSnapshot(roots)]));
}

/** CPU ms spent per group between two `groupSnapshot`s. */
export function groupSpentMs(before, after) {
  return Object.fromEntries(Object.keys(after).map((name) => [name, cpuSpentMs(before[name], after[name])]));
}

/**
 * CPU ms of this process and of its waited-for children (utime, stime, cutime, cstime): the load
 * generator of a measurement, autocannon in this process or ghz as a child once it has exited.
 */
export function selfAndChildrenCpuMs() {
  try {
    const text = readFileSync('/proc/self/stat', 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    return (ticks * 1000) / hz();
  } catch {
    return null;
  }
}

/** The machine's CPU time so far from /proc/stat, in ms: `{ busy, total }` over every core. */
export function machineCpuMs() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const total = ticks.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = ticks[3] + ticks[4];
    return { busy: ((total - idle) * 1000) / hz(), total: (total * 1000) / hz() };
  } catch {
    return null;
  }
}

/** Every live thread of a process: `{ tid, comm, ms, sysMs }` (utime + stime; stime), [] when it is gone. */
function threadsOf(pid) {
  let tids;
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const threads = [];
  for (const tid of tids) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      threads.push({
        tid: Number(tid),
        comm: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')),
        ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / hz(),
        sysMs: (Number(fields[12]) * 1000) / hz(),
      });
    } catch {
      // the thread exited between the listing and the read
    }
  }
  return threads;
}

/**
 * How often the process's main thread went to sleep (`voluntary_ctxt_switches` of /proc/<pid>/status):
 * each one is an event loop that blocked in epoll and was woken again. Null when it is gone.
 */
export function mainThreadSleeps(pid) {
  try {
    const match = /voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

/** CPU ms of one process, its threads included (those that exited too), or null when it is gone. */
export function processCpuMs(pid) {
  return stat(pid)?.cpuMs ?? null;
}

/**
 * CPU ms per thread kind of one process, from /proc/<pid>/task/*\/stat: `main` (the JS thread, whose
 * comm is the process's), `v8` (V8Worker: GC helpers and concurrent JIT), `rdk:broker` (librdkafka's
 * per-broker threads, summed), any other thread by its name (libuv's pool, librdkafka's main …).
 * Tells garbage and compilation from the relay's own work. Threads that exited are not counted.
 * `sys` is the kernel's share (stime) of all those threads together, already counted in their kinds:
 * socket writes and reads on loopback pay the receiving side's TCP work too.
 */
export function threadSnapshot(pid) {
  const byKind = { main: 0, v8: 0, sys: 0 };
  for (const { tid, comm, ms, sysMs } of threadsOf(pid)) {
    const kind =
      tid === pid
        ? 'main'
        : comm.startsWith('V8Worker')
          ? 'v8'
          : comm.startsWith('rdk:broker')
            ? 'rdk:broker'
            : comm;
    byKind[kind] = (byKind[kind] ?? 0) + ms;
    byKind.sys += sysMs;
  }
  return byKind;
}

/** Per thread kind, CPU ms spent between two `threadSnapshot`s of one process. */
export function threadSpentMs(before, after) {
  return Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - (before[k] ?? 0)]));
}

/**
 * The name HotSpot's JIT compiler threads share once digits are folded (`C2 CompilerThread0`,
 * `C1 CompilerThread1`: a comm holds 15 characters): a JVM's compilation apart from its work.
 */
export const JIT_COMPILER_THREADS = 'C# CompilerThre';

/** CPU ms of every live thread of a process by tid, with its name, digits folded to `#`. */
export function threadsByTid(pid) {
  return new Map(threadsOf(pid).map((t) => [t.tid, { name: t.comm.replace(/\d+/g, '#'), ms: t.ms }]));
}

/**
 * CPU ms per thread name spent between two `threadsByTid`s of one process, thread by thread: one
 * started in between counts from 0; one that exited in between (HotSpot stops compiler threads it
 * no longer needs) is left out, its CPU since the first reading only in the process's total.
 */
export function threadSpentByName(before, after) {
  const byName = {};
  for (const [tid, { name, ms }] of after)
    byName[name] = (byName[name] ?? 0) + ms - (before.get(tid)?.ms ?? 0);
  return byName;
}
