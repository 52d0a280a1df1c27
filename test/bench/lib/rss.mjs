// Memory of a process the bench started, from /proc (Linux): VmRSS now and VmHWM, the peak RSS since
// it started, in MB. Elsewhere (no /proc) the figures are null rather than a guess.
import { readFileSync } from 'node:fs';

export function processMemory(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN);
    return { rss: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return { rss: null, peak: null };
  }
}
