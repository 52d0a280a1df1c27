import { ALL_POLICIES } from '../fold/fold-events';
import type { Granularity } from '../fold/granularity';
import type { Totals } from '../fold/totals';

/** One row of a usage page (DESIGN §4). */
export interface UsageBucketView {
  /** Bucket start, `2026-11-30T09:00:00Z`. */
  readonly start: string;
  readonly policy: string;
  readonly cost: number;
  readonly count: number;
}

/** The body of `GET /v1/usage`, field for field. */
export interface UsageView {
  readonly tenant: string;
  readonly granularity: Granularity;
  /** The policy key asked for, echoed; absent when the query named none. */
  readonly key?: string;
  readonly buckets: readonly UsageBucketView[];
  /** The whole range, not just this page; without a policy, each decision counted once. */
  readonly total: Totals;
  readonly next_cursor: string | null;
}

/** `2026-11-30T09:00:00Z`: whole seconds drop the fraction, as in the contract's example. */
export function formatInstant(ms: number): string {
  const iso = new Date(ms).toISOString();
  return iso.endsWith('.000Z') ? `${iso.slice(0, -5)}Z` : iso;
}

/**
 * The rows of one bucket: every policy with usage, by name, or just `policy` when the query named
 * one. The all-policies aggregate is not a row (it is what `total` sums); empty rows are dropped.
 */
export function bucketRows(
  startMs: number,
  totals: ReadonlyMap<string, Totals>,
  policy: string | undefined,
): UsageBucketView[] {
  const start = formatInstant(startMs);
  const names = policy === undefined ? [...totals.keys()].filter((n) => n !== ALL_POLICIES).sort() : [policy];
  const rows: UsageBucketView[] = [];
  for (const name of names) {
    const t = totals.get(name);
    if (t === undefined || (t.cost === 0 && t.count === 0)) continue;
    rows.push({ start, policy: name, cost: t.cost, count: t.count });
  }
  return rows;
}
