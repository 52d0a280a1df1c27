import { gcra } from '@tally/window-math';
import type { WindowMathSpec } from '../window-math';
import { numbers, type AlgorithmEntry, type ReseedFold, type ReseedRule } from './algorithm-entry';

// GCRA's maths (the mirror of lua/algorithms/gcra.lua) is @tally/window-math's `gcra`, which the SDK
// runs too; here its state codec, state view and reseed.

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
