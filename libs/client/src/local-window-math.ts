import type { TallyLocalWindow } from './client.types';

/**
 * The server's window maths (libs/engine's `window-math.ts`, the mirror of decide.lua) for the
 * algorithms the SDK's local fallback offers: the SDK loads no server code, so it carries its own
 * copy, and test/integration/client-local-fallback.parity.test.ts holds it to the server's, decision
 * by decision. Integer arithmetic, exact while `limit × periodMs` < 2^53. A denial changes nothing;
 * cost 0 is a peek; `retryAfterMs` is the exact earliest wait (the caller never passes a cost above
 * the limit).
 */
export interface LocalWindowState {
  readonly b?: number;
  readonly c?: number;
  readonly p?: number;
  readonly t?: number;
  readonly ts?: number;
  /** gcra: the theoretical arrival time, `tat` + `sub` / limit ms. */
  readonly tat?: number;
  readonly sub?: number;
}

export interface LocalWindowResult {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
  readonly nextState: LocalWindowState;
  /** After a commit, how long the state matters. */
  readonly ttlMs: number;
}

export type LocalWindowSpec = Pick<TallyLocalWindow, 'algorithm' | 'limit' | 'periodMs' | 'burst'>;

export function evaluateLocalWindow(
  spec: LocalWindowSpec,
  state: LocalWindowState,
  nowMs: number,
  cost: number,
): LocalWindowResult {
  const { limit, periodMs: period } = spec;
  switch (spec.algorithm) {
    case 'fixed_window': {
      const bucket = Math.floor(nowMs / period);
      const resetMs = (bucket + 1) * period - nowMs;
      const count = state.b === bucket ? (state.c ?? 0) : 0;
      const ttlMs = 2 * period;
      if (count + cost > limit)
        return {
          allowed: false,
          remaining: Math.max(0, limit - count),
          resetMs,
          retryAfterMs: resetMs,
          nextState: state,
          ttlMs,
        };
      const nextState = cost === 0 ? state : { b: bucket, c: count + cost };
      return { allowed: true, remaining: limit - count - cost, resetMs, retryAfterMs: 0, nextState, ttlMs };
    }
    case 'sliding_window':
      return sliding(limit, period, state, nowMs, cost);
    case 'token_bucket':
      return tokenBucket(limit, period, state, nowMs, cost);
    case 'gcra':
      return gcra(limit, period, spec.burst ?? 1, state, nowMs, cost);
  }
}

/** One unit every period / limit, up to `burst` at once; times kept in ms × limit (TAT = tat + sub / limit). */
function gcra(
  limit: number,
  period: number,
  burst: number,
  state: LocalWindowState,
  nowMs: number,
  cost: number,
): LocalWindowResult {
  const cap = burst * period;
  const debt = state.tat === undefined ? 0 : Math.max(0, (state.tat - nowMs) * limit + (state.sub ?? 0));
  const need = debt + cost * period;
  if (need > cap) {
    const resetMs = Math.ceil(debt / limit);
    return {
      allowed: false,
      remaining: Math.max(0, Math.floor((cap - debt) / period)),
      resetMs,
      retryAfterMs: Math.ceil((need - cap) / limit),
      nextState: state,
      ttlMs: resetMs,
    };
  }
  const ahead = Math.floor(need / limit);
  const resetMs = Math.ceil(need / limit);
  const nextState = cost === 0 ? state : { tat: nowMs + ahead, sub: need - ahead * limit };
  return {
    allowed: true,
    remaining: Math.floor((cap - need) / period),
    resetMs,
    retryAfterMs: 0,
    nextState,
    ttlMs: resetMs,
  };
}

/** prev × (P − e) + (cur + cost) × P ≤ limit × P, everything kept × P to stay integer. */
function sliding(
  limit: number,
  period: number,
  state: LocalWindowState,
  nowMs: number,
  cost: number,
): LocalWindowResult {
  const bucket = Math.floor(nowMs / period);
  const toEnd = period - (nowMs - bucket * period);
  let prev = 0;
  let cur = 0;
  if (state.b === bucket) {
    prev = state.p ?? 0;
    cur = state.c ?? 0;
  } else if (state.b === bucket - 1) {
    prev = state.c ?? 0;
  }
  const weighted = prev * toEnd + cur * period;
  const allowed = weighted + cost * period <= limit * period;
  const spent = allowed ? cost : 0;
  const after = cur + spent;
  const remaining = Math.max(0, Math.floor((limit * period - weighted - spent * period) / period));
  const resetMs = after > 0 ? toEnd + period : prev > 0 ? toEnd : 0;
  const ttlMs = 2 * period;
  if (!allowed) {
    const retryAfterMs =
      cur + cost <= limit
        ? toEnd - Math.floor(((limit - cur - cost) * period) / prev)
        : toEnd + Math.max(0, period - Math.floor(((limit - cost) * period) / cur));
    return { allowed, remaining, resetMs, retryAfterMs, nextState: state, ttlMs };
  }
  const nextState = cost === 0 ? state : { b: bucket, c: after, p: prev };
  return { allowed, remaining, resetMs, retryAfterMs: 0, nextState, ttlMs };
}

/** Capacity `limit`, refilled `limit` per period continuously; tokens kept × P. */
function tokenBucket(
  limit: number,
  period: number,
  state: LocalWindowState,
  nowMs: number,
  cost: number,
): LocalWindowResult {
  const capacity = limit * period;
  const elapsed = Math.max(0, nowMs - (state.ts ?? nowMs));
  const level = state.t === undefined ? capacity : Math.min(capacity, state.t + elapsed * limit);
  const need = cost * period;
  if (level < need)
    return {
      allowed: false,
      remaining: Math.floor(level / period),
      resetMs: Math.ceil((capacity - level) / limit),
      retryAfterMs: Math.ceil((need - level) / limit),
      nextState: state,
      ttlMs: period,
    };
  const after = level - need;
  const nextState = cost === 0 ? state : { t: after, ts: Math.max(nowMs, state.ts ?? nowMs) };
  return {
    allowed: true,
    remaining: Math.floor(after / period),
    resetMs: Math.ceil((capacity - after) / limit),
    retryAfterMs: 0,
    nextState,
    ttlMs: period,
  };
}
