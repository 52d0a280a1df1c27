import type { WindowSpec } from '@tally/policy';
import { utcMonthOf } from './utc-month';

/**
 * The window algorithms in pure TypeScript: a mirror of decide.lua's pieces (lua/algorithms/), used
 * by the local fallback, by `tally simulate`, by unit tests and by the parity test that compares it
 * with the script on a real Redis, algorithm by algorithm (test/integration/algorithm-parity.test.ts).
 *
 * State is the window's packed field of the policy state hash read back by its registry codec
 * (algorithms/registry.ts), field by field (all numbers):
 * - fixed_window / calendar_month: `b` bucket index, `c` units counted in that bucket;
 * - sliding_window: `b` current bucket index, `c` its count, `p` the previous bucket's count;
 * - token_bucket: `t` tokens × periodMs (an integer: refill is `limit` per ms in these units, so the
 *   maths is exact integer arithmetic), `ts` the ms of the last commit;
 * - gcra: `tat` + `sub` / limit, its theoretical arrival time (algorithms/gcra.ts).
 * A missing hash is the empty state (nothing counted, a full bucket).
 *
 * Semantics shared by all algorithms:
 * - a cost is allowed iff the window can afford all of it; a denial changes nothing (`nextState` is
 *   the input state), and so does cost 0 (a peek);
 * - `remaining` is what is left after this decision (after the commit when allowed), never negative;
 * - `resetMs` is how long until the window is back to its full limit given what is counted now;
 * - `retryAfterMs` (denials only) is the earliest wait after which the same cost would be allowed,
 *   assuming nothing else is spent meanwhile; it is exact, never early.
 * Integer products stay exact while `limit × periodMs` < 2^53 (e.g. a limit of 3 million per 31 days).
 */
export interface WindowState {
  readonly b?: number;
  readonly c?: number;
  readonly p?: number;
  readonly t?: number;
  readonly ts?: number;
  /** gcra: its theoretical arrival time, `tat` + `sub` / limit ms (`sub` < limit keeps it exact). */
  readonly tat?: number;
  readonly sub?: number;
}

export type WindowMathSpec = Pick<WindowSpec, 'algorithm' | 'limit' | 'periodMs' | 'burst'>;

export interface WindowResult {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  /** 0 when allowed. */
  readonly retryAfterMs: number;
  /** The hash after the commit (the input state when denied or cost is 0). */
  readonly nextState: WindowState;
  /** PEXPIRE of the hash after a commit: past it the state no longer matters. */
  readonly ttlMs: number;
}

// Each algorithm's maths, as registered in algorithms/registry.ts (`evaluateWindow` dispatches there).

/** Aligned to epoch multiples of the period; the bucket ends at (b + 1) × period. */
export function fixedWindow(
  spec: WindowMathSpec,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  const bucket = Math.floor(nowMs / spec.periodMs);
  const endMs = (bucket + 1) * spec.periodMs;
  return counter(spec.limit, state, bucket, endMs - nowMs, 2 * spec.periodMs, cost);
}

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

export function slidingWindow(
  spec: WindowMathSpec,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  return sliding(spec.limit, spec.periodMs, state, nowMs, cost);
}

export function tokenBucket(
  spec: WindowMathSpec,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  return bucket(spec.limit, spec.periodMs, state, nowMs, cost);
}

/**
 * Units in flight depend on releases, which no usage record holds: offline (`tally simulate`) a
 * concurrency window always allows and keeps no state. decide.lua keeps the real leases.
 */
export function concurrencyWindow(spec: WindowMathSpec, state: WindowState): WindowResult {
  return { allowed: true, remaining: spec.limit, resetMs: 0, retryAfterMs: 0, nextState: state, ttlMs: 0 };
}

/** Fixed and calendar windows: one counter per bucket; a denied cost fits again once the bucket ends. */
function counter(
  limit: number,
  state: WindowState,
  bucket: number,
  resetMs: number,
  ttlMs: number,
  cost: number,
): WindowResult {
  const count = state.b === bucket ? (state.c ?? 0) : 0;
  if (count + cost > limit) {
    // retry = reset: the next bucket starts empty (a cost above the limit never fits; the engine
    // refuses such costs with 413 before they get here).
    return {
      allowed: false,
      remaining: Math.max(0, limit - count),
      resetMs,
      retryAfterMs: resetMs,
      nextState: state,
      ttlMs,
    };
  }
  const nextState = cost === 0 ? state : { b: bucket, c: count + cost };
  return { allowed: true, remaining: limit - count - cost, resetMs, retryAfterMs: 0, nextState, ttlMs };
}

/**
 * Two buckets of one period each. With e = ms elapsed in the current bucket, the estimate of units in
 * the last period is prev × (P − e)/P + cur; allowed iff estimate + cost ≤ limit. Everything is kept
 * multiplied by P so it is integer: prev×(P−e) + (cur+cost)×P ≤ limit×P.
 */
function sliding(
  limit: number,
  period: number,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  const bucket = Math.floor(nowMs / period);
  const elapsed = nowMs - bucket * period;
  const toEnd = period - elapsed;
  let prev = 0;
  let cur = 0;
  if (state.b === bucket) {
    prev = state.p ?? 0;
    cur = state.c ?? 0;
  } else if (state.b === bucket - 1) {
    prev = state.c ?? 0;
  }
  const weighted = prev * toEnd + cur * period; // estimate × P
  const allowed = weighted + cost * period <= limit * period;
  const spent = allowed ? cost : 0;
  const after = cur + spent;
  const remaining = Math.max(0, Math.floor((limit * period - weighted - spent * period) / period));
  // Reset: `cur` stops counting once it has slid out, one full period after the current bucket ends;
  // a previous bucket alone is gone when the current one ends.
  const resetMs = after > 0 ? toEnd + period : prev > 0 ? toEnd : 0;
  const ttlMs = 2 * period;
  if (!allowed) {
    let retryAfterMs: number;
    if (cur + cost <= limit) {
      // The previous bucket's weight alone must shrink: prev × (P − e − t) ≤ (limit − cur − cost) × P,
      // so t = (P − e) − floor((limit − cur − cost) × P / prev). prev > 0 here, else it would fit.
      retryAfterMs = toEnd - Math.floor(((limit - cur - cost) * period) / prev);
    } else {
      // Only in the next bucket, where cur becomes prev: at offset x, cur × (P − x) ≤ (limit − cost) × P,
      // so x = P − floor((limit − cost) × P / cur) (cur > 0 here since cur + cost > limit ≥ cost).
      retryAfterMs = toEnd + Math.max(0, period - Math.floor(((limit - cost) * period) / cur));
    }
    return { allowed, remaining, resetMs, retryAfterMs, nextState: state, ttlMs };
  }
  const nextState = cost === 0 ? state : { b: bucket, c: after, p: prev };
  return { allowed, remaining, resetMs, retryAfterMs: 0, nextState, ttlMs };
}

/**
 * capacity = limit, refill = limit/period per ms, continuous. Tokens are kept ×P so a refill of `e` ms
 * adds exactly e × limit units. The state expires once the bucket would be full anyway.
 */
function bucket(
  limit: number,
  period: number,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  const capacity = limit * period;
  const elapsed = Math.max(0, nowMs - (state.ts ?? nowMs));
  const level = state.t === undefined ? capacity : Math.min(capacity, state.t + elapsed * limit);
  const need = cost * period;
  if (level < need) {
    // Wait until `need − level` has refilled at `limit` per ms: ceil((need − level) / limit).
    const retryAfterMs = Math.ceil((need - level) / limit);
    const resetMs = Math.ceil((capacity - level) / limit);
    return {
      allowed: false,
      remaining: Math.floor(level / period),
      resetMs,
      retryAfterMs,
      nextState: state,
      ttlMs: period,
    };
  }
  const after = level - need;
  const resetMs = Math.ceil((capacity - after) / limit);
  // ts never moves backwards, so a clock that steps back cannot refill the same span twice.
  const nextState = cost === 0 ? state : { t: after, ts: Math.max(nowMs, state.ts ?? nowMs) };
  return {
    allowed: true,
    remaining: Math.floor(after / period),
    resetMs,
    retryAfterMs: 0,
    nextState,
    ttlMs: period,
  };
}
