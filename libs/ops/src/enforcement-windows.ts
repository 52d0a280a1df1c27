import { ALGORITHM_REGISTRY, utcMonthOf } from '@tally/engine';
import { formatDuration, type PolicySet, type WindowSpec } from '@tally/policy';
import type { Granularity } from '@tally/projections';
import { sustainedWindows, type SustainedWindow } from './reseed-plan';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** A sustained window whose current bucket is exactly one projection bucket. */
export interface ComparedWindow extends SustainedWindow {
  readonly bucket: number;
  readonly granularity: Granularity;
  /** The current bucket [start, end) (epoch ms, UTC): the projection bucket it is compared with. */
  readonly bucketStartMs: number;
  readonly bucketEndMs: number;
}

/** A window of the set that `reconcile --enforcement` cannot compare, and why. */
export interface SkippedWindow {
  readonly policy: string;
  readonly window: string;
  readonly reason: string;
}

/**
 * The windows whose counters the projection can check: the reseed's sustained windows (so both
 * commands agree on what a counter is) whose current bucket coincides with an hour, day or month
 * bucket of the projection. Epoch-aligned 1h and 1d buckets are UTC hours and days, and calendar
 * months are UTC months, exactly the projection's buckets; a 2h or 7d bucket has no counterpart.
 */
export function comparedWindows(
  set: PolicySet,
  nowMs: number,
  only?: string,
): { compared: ComparedWindow[]; skipped: SkippedWindow[] } {
  const compared: ComparedWindow[] = [];
  for (const w of sustainedWindows(set, nowMs, only)) {
    const bucket = w.bucket;
    // A window without buckets (gcra: a level) has no projection bucket to match.
    if (bucket === undefined) continue;
    if (w.window.algorithm === 'calendar_month') {
      const month = utcMonthOf(nowMs);
      compared.push({
        ...w,
        bucket,
        granularity: 'month',
        bucketStartMs: month.startMs,
        bucketEndMs: month.endMs,
      });
      continue;
    }
    const period = w.window.periodMs;
    const granularity = period === HOUR_MS ? 'hour' : period === DAY_MS ? 'day' : undefined;
    if (granularity === undefined) continue;
    const bucketStartMs = bucket * period;
    compared.push({ ...w, bucket, granularity, bucketStartMs, bucketEndMs: bucketStartMs + period });
  }
  const skipped: SkippedWindow[] = [];
  for (const policy of set.policies) {
    if (only !== undefined && policy.name !== only) continue;
    for (const window of policy.windows) {
      if (compared.some((c) => c.policy === policy && c.window === window)) continue;
      skipped.push({ policy: policy.name, window: window.name, reason: skipReason(policy.enabled, window) });
    }
  }
  return { compared, skipped };
}

function skipReason(enabled: boolean, window: WindowSpec): string {
  if (!enabled) return 'policy disabled (counts nothing)';
  const rule = ALGORITHM_REGISTRY[window.algorithm].reseed;
  if ('skip' in rule) return rule.skip;
  if (rule.unbucketed !== undefined) return rule.unbucketed;
  return `${window.algorithm} of ${formatDuration(window.periodMs)} has no projection bucket (only 1h, 1d, calendar month)`;
}
