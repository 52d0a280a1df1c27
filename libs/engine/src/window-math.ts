import type { WindowSpec } from '@tally/policy';
import { counter, type WindowResult, type WindowState } from '@tally/window-math';
import { utcMonthOf } from './utc-month';

/**
 * The window algorithms in pure TypeScript: a mirror of decide.lua's pieces (lua/algorithms/), used
 * by the local fallback, by `tally simulate`, by unit tests and by the parity test that compares it
 * with the script on a real Redis, algorithm by algorithm (test/integration/algorithm-parity.test.ts).
 * The maths the SDK runs too (fixed and sliding windows, token bucket, gcra), its state and its shared
 * semantics are @tally/window-math's; here the two that only the server has. The registry
 * (algorithms/registry.ts) dispatches to each and reads a window's state back through its codec.
 */
export type { WindowResult, WindowState };

export type WindowMathSpec = Pick<WindowSpec, 'algorithm' | 'limit' | 'periodMs' | 'burst'>;

/** A fixed window over UTC calendar months (utc-month.ts). */
export function calendarMonth(
  spec: WindowMathSpec,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  const month = utcMonthOf(nowMs);
  // The state matters until the month ends; a day of slack covers a clock that runs slightly late.
  return counter(spec.limit, state, month.index, month.endMs - nowMs, month.endMs - nowMs + 86_400_000, cost);
}

/**
 * Units in flight depend on releases, which no usage record holds: offline (`tally simulate`) a
 * concurrency window always allows and keeps no state. decide.lua keeps the real leases.
 */
export function concurrencyWindow(spec: WindowMathSpec, state: WindowState): WindowResult {
  return { allowed: true, remaining: spec.limit, resetMs: 0, retryAfterMs: 0, nextState: state, ttlMs: 0 };
}
