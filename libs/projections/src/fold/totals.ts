/** Usage of a bucket: units spent and decisions counted. */
export interface Totals {
  readonly cost: number;
  readonly count: number;
}

export const ZERO_TOTALS: Totals = Object.freeze({ cost: 0, count: 0 });

/**
 * The sum of any number of totals (the query's range `total`, or a page's). Exact while it stays
 * within 2^53 − 1 (parts are stored counters, each within it); past it, the result is above 2^53 − 1
 * however doubles round, so callers tell "not exact" by comparing with `MAX_AGGREGATE`.
 */
export function mergeTotals(...parts: readonly Totals[]): Totals {
  let cost = 0;
  let count = 0;
  for (const part of parts) {
    cost += part.cost;
    count += part.count;
  }
  return { cost, count };
}

export function isZeroTotals(totals: Totals): boolean {
  return totals.cost === 0 && totals.count === 0;
}
