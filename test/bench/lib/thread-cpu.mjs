// CPU time of one process split by thread name, from /proc/<pid>/task/*/stat (Linux): where a relay's
// CPU goes (the JavaScript main thread, V8's GC helpers, libuv's pool, librdkafka's rdk:* threads).
// Threads of one name are summed; librdkafka's per-broker threads become `rdk:broker`.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ 100, as proc-cpu.mjs asks getconf; a split is a proportion, not a total

const group = (name) => (name.startsWith('rdk:broker') ? 'rdk:broker' : name);

/** thread group → CPU ms so far (threads that ended before the reading are not in it). */
export function threadCpu(pid) {
  const out = {};
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = text.slice(text.indexOf('(') + 1, text.lastIndexOf(')'));
      const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
      const key = group(name);
      out[key] = (out[key] ?? 0) + (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/** after − before, per thread group, in ms. */
export function threadCpuSpent(before, after) {
  const out = {};
  for (const [k, v] of Object.entries(after)) out[k] = v - (before[k] ?? 0);
  return out;
}
