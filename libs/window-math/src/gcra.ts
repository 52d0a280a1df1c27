import type { WindowParams, WindowResult, WindowState } from './window-state';

/**
 * GCRA, the generic cell rate algorithm (as redis-cell and Stripe's limiter): one unit every
 * T = period / limit, with a burst tolerance τ = (burst − 1) × T. The state is the theoretical arrival
 * time TAT: a cost passes iff max(TAT, now) + cost × T − now ≤ burst × T (for a cost of 1: TAT − τ ≤
 * now), and then TAT = max(TAT, now) + cost × T. A burst of `burst` passes at once, then exactly one
 * unit per T.
 *
 * Exact in integers: times are kept in ms × limit, where T is `period` (an integer). The debt
 * d = max(0, TAT − now) × limit; the state stores TAT as `tat` + `sub` / limit ms (0 ≤ sub < limit).
 * - allowed iff d + cost × period ≤ burst × period; then d' = d + cost × period;
 * - remaining = ⌊(burst × period − d') / period⌋: units that could pass now;
 * - reset_ms = ⌈d' / limit⌉: until TAT, when all of the burst is back;
 * - retry_after_ms (denied) = ⌈(d + cost × period − burst × period) / limit⌉, exact, never early.
 * libs/engine's lua/algorithms/gcra.lua is the same maths, line by line.
 */
export function gcra(spec: WindowParams, state: WindowState, nowMs: number, cost: number): WindowResult {
  const { limit, periodMs: period } = spec;
  const cap = (spec.burst ?? 1) * period;
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
