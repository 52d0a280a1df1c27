/**
 * The largest value any stored aggregate may hold: 2^53 − 1. Every integer up to it is exact as a
 * double, which is what a number is in Lua (apply-batch.lua sums in Redis), in JavaScript (the fold,
 * the queries) and in most JSON parsers (the callers of `GET /v1/usage`). A sum that would pass it is
 * never written: the event that would take it there is refused and dead-lettered instead
 * (apply-batch.lua's legend), so every number the projections hold or answer is exact.
 */
export const MAX_AGGREGATE = Number.MAX_SAFE_INTEGER;

/** `MAX_AGGREGATE` as apply-batch.lua receives it (ARGV), digits and all. */
export const MAX_AGGREGATE_DIGITS = String(MAX_AGGREGATE);

const DIGITS = /^\d{1,16}$/;

/**
 * A stored counter: decimal digits worth at most `MAX_AGGREGATE`; null for anything else (a sign,
 * a fraction, an exponent, a value past 2^53 − 1 that a double would round). The same rule as
 * apply-batch.lua's `counter()`, so what the step refuses to add to, the queries refuse to read.
 */
export function parseExactCounter(raw: string): number | null {
  if (!DIGITS.test(raw)) return null;
  const value = Number(raw);
  return value <= MAX_AGGREGATE ? value : null;
}
