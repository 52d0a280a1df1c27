import type { WindowParams, WindowResult, WindowState } from './window-state';

// The counter algorithms in pure TypeScript, the mirror of decide.lua's pieces (libs/engine's
// lua/algorithms/), shared semantics in window-state.ts. The engine's registry dispatches to them
// (and to calendar_month, a counter over UTC months), the SDK's local fallback too.

/** Aligned to epoch multiples of the period; the bucket ends at (b + 1) × period. */
export function fixedWindow(
  spec: WindowParams,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  const bucket = Math.floor(nowMs / spec.periodMs);
  const endMs = (bucket + 1) * spec.periodMs;
  return counter(spec.limit, state, bucket, endMs - nowMs, 2 * spec.periodMs, cost);
}

export function slidingWindow(
  spec: WindowParams,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  return sliding(spec.limit, spec.periodMs, state, nowMs, cost);
}

export function tokenBucket(
  spec: WindowParams,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  return bucket(spec.limit, spec.periodMs, state, nowMs, cost);
}

/**
 * Fixed and calendar windows: one counter per bucket (`bucket` its index, `resetMs` the time to its end);
 * a denied cost fits again once the bucket ends.
 */
export function counter(
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
