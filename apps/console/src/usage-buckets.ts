/**
 * The usage chart's time axis: every bucket of the range, empty ones included, so the x axis is time
 * (a bucket without usage is a 0, not a missing bar). Buckets start on UTC boundaries, as the
 * projector's do; a month is the calendar month.
 */

/** More buckets than this are not drawn (a minute view of a month); the table still lists them. */
export const MAX_BUCKETS = 2000;

const STEP_MS: Record<string, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };

/** Starts (epoch ms) of the buckets that overlap [fromMs, toMs); null when there are too many. */
export function bucketStarts(granularity: string, fromMs: number, toMs: number): number[] | null {
  if (!Number.isFinite(fromMs) || !Number.isFinite(toMs) || toMs <= fromMs) return [];
  const starts: number[] = [];
  const step = STEP_MS[granularity];
  if (step !== undefined) {
    for (let t = Math.floor(fromMs / step) * step; t < toMs; t += step) {
      if (starts.length === MAX_BUCKETS) return null;
      starts.push(t);
    }
    return starts;
  }
  const d = new Date(fromMs);
  for (let y = d.getUTCFullYear(), m = d.getUTCMonth(); Date.UTC(y, m) < toMs; m++) {
    if (starts.length === MAX_BUCKETS) return null;
    starts.push(Date.UTC(y, m));
  }
  return starts;
}

/** One series per policy (sorted by name), its cost at each start; a bucket it did not use is 0. */
export function costPerPolicy(
  buckets: readonly { start: string; policy: string; cost: number }[],
  starts: readonly number[],
): { label: string; values: number[] }[] {
  const index = new Map(starts.map((t, i) => [t, i]));
  const series = new Map<string, number[]>();
  for (const b of buckets) {
    const i = index.get(Date.parse(b.start));
    if (i === undefined) continue;
    let values = series.get(b.policy);
    if (values === undefined) series.set(b.policy, (values = starts.map(() => 0)));
    values[i] += b.cost;
  }
  return [...series].sort(([a], [b]) => (a < b ? -1 : 1)).map(([label, values]) => ({ label, values }));
}
