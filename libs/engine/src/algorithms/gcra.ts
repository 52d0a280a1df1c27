import type { WindowMathSpec, WindowResult, WindowState } from '../window-math';
import { numbers, type AlgorithmEntry, type ReseedFold, type ReseedRule } from './algorithm-entry';

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
 * lua/algorithms/gcra.lua is the same maths, line by line.
 */
export function gcra(spec: WindowMathSpec, state: WindowState, nowMs: number, cost: number): WindowResult {
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

const STATE = /^g(\d+):(\d+)$/;
const HOUR_MS = 3_600_000;

/**
 * `tally reseed`: the TAT the ledger's allowed usage makes, replayed in time order from an empty
 * state (TAT = max(TAT, t) + cost × T per event; each was allowed, so no check). Events older than
 * twice the burst's refill time are left out: the rebuilt TAT is then a lower bound, never too high,
 * and reseed.lua keeps the later of it and the stored one. A window whose whole burst comes back
 * within the hour is not rebuilt (as counters of less than an hour).
 */
const RESEED: ReseedRule = {
  unbucketed: 'gcra (a level: its theoretical arrival time, not a sum per bucket)',
  plan: (spec, nowMs) => {
    const refillMs = Math.ceil(((spec.burst ?? 1) * spec.periodMs) / spec.limit);
    if (refillMs < HOUR_MS) return undefined;
    return { sinceMs: nowMs - 2 * refillMs, previous: false, fold: () => replay(spec, nowMs) };
  },
};

function replay(spec: WindowMathSpec, nowMs: number): ReseedFold {
  const events: [number, number][] = [];
  return {
    add: (timeMs, cost) => {
      if (timeMs <= nowMs) events.push([timeMs, cost]);
    },
    result: () => {
      const { limit, periodMs: period } = spec;
      let tat = 0;
      let sub = 0;
      for (const [t, cost] of events.sort((a, b) => a[0] - b[0])) {
        const need = Math.max(0, (tat - t) * limit + sub) + cost * period;
        const ahead = Math.floor(need / limit);
        tat = t + ahead;
        sub = need - ahead * limit;
      }
      return { bucket: tat, count: sub, previous: 0, ttlMs: Math.max(1, tat - nowMs) + period };
    },
  };
}

export const GCRA: AlgorithmEntry = {
  letter: 'g',
  lua: 'gcra.lua',
  param: (spec) => spec.burst ?? 1,
  state: {
    unpack: (value): Record<string, string> => {
      const m = STATE.exec(value);
      return m === null ? {} : { tat: m[1], sub: m[2] };
    },
    pack: (s) => `g${s.tat ?? 0}:${s.sub ?? 0}`,
  },
  evaluate: gcra,
  counters: (s) => ({ tat_ms: numbers(s).tat ?? 0 }),
  reseed: RESEED,
  clientLocal: true,
};
