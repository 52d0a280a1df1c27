// Memory of a process the bench started, from /proc (Linux), in MB. Elsewhere (no /proc) the figures
// are null rather than a guess.
import { readFileSync } from 'node:fs';

const mb = (kb) => Math.round(kb / 1024);

/** VmRSS now and VmHWM, the peak RSS since the process started. */
export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
    return { rss: mb(kb('VmRSS')), peak: mb(kb('VmHWM')) };
  } catch {
    return { rss: null, peak: null };
  }
}

/**
 * RSS split into anonymous memory (the V8 heap, malloc, thread stacks: this process's own) and
 * file-backed pages (the node binary's code and data, mostly shared with every other node process,
 * yet counted in each one's RSS).
 */
export function smapsMemory(pid) {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(rollup)?.[1] ?? Number.NaN);
    return { rss: mb(kb('Rss')), anon: mb(kb('Anonymous')), file: mb(kb('Rss') - kb('Anonymous')) };
  } catch {
    return { rss: null, anon: null, file: null };
  }
}

/** A process and its children (node:cluster workers are children of the primary), parent first. */
export function processTree(pid) {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return [pid, ...children.split(/\s+/).filter(Boolean).map(Number)];
  } catch {
    return [pid];
  }
}
