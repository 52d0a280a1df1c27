/**
 * Usage bucket sizes (DESIGN §4). Every bucket is aligned in UTC: minute/hour/day are fixed lengths
 * from the epoch (UTC has no DST; leap seconds do not exist in epoch ms), month is the calendar month.
 * Each coarser bucket is an exact union of finer ones, which `coverRange` relies on.
 */
export const GRANULARITIES = ['minute', 'hour', 'day', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const FIXED_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

export function isGranularity(value: unknown): value is Granularity {
  return typeof value === 'string' && (GRANULARITIES as readonly string[]).includes(value);
}

/** Start (epoch ms, UTC) of the bucket containing `ms`. */
export function bucketStart(ms: number, granularity: Granularity): number {
  if (granularity === 'month') {
    const date = new Date(ms);
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  }
  const size = FIXED_MS[granularity];
  // floor, not truncation: correct for instants before the epoch too.
  return Math.floor(ms / size) * size;
}

/** Start of the bucket `n` buckets after the one containing `ms` (n may be negative). */
export function addBuckets(ms: number, granularity: Granularity, n: number): number {
  const start = bucketStart(ms, granularity);
  if (granularity === 'month') {
    const date = new Date(start);
    // Date.UTC normalises month overflow (month 12 → January of the next year).
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + n, 1);
  }
  return start + n * FIXED_MS[granularity];
}

/** Start of the bucket after the one containing `ms`: the exclusive end of that bucket. */
export function nextBucketStart(ms: number, granularity: Granularity): number {
  return addBuckets(ms, granularity, 1);
}

/** How many buckets start in [fromMs, toMs) when both are bucket starts of `granularity`. */
export function bucketCount(fromMs: number, toMs: number, granularity: Granularity): number {
  if (toMs <= fromMs) return 0;
  if (granularity === 'month') {
    const from = new Date(fromMs);
    const to = new Date(toMs);
    return (to.getUTCFullYear() - from.getUTCFullYear()) * 12 + to.getUTCMonth() - from.getUTCMonth();
  }
  return Math.round((toMs - fromMs) / FIXED_MS[granularity]);
}
