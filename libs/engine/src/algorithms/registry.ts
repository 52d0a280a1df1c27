import type { Algorithm } from '@tally/policy';
import { utcMonthOf } from '../utc-month';
import { fixedWindow, slidingWindow, tokenBucket } from '@tally/window-math';
import {
  concurrencyWindow,
  calendarMonth,
  type WindowMathSpec,
  type WindowResult,
  type WindowState,
} from '../window-math';
import {
  numbers,
  type AlgorithmEntry,
  type ReseedFold,
  type ReseedRule,
  type StateCodec,
} from './algorithm-entry';
import { GCRA } from './gcra';

/**
 * The algorithm registry: everything the engine knows of each algorithm, in one record keyed by it.
 * A mapped type, so an algorithm added to `ALGORITHMS` (@tally/policy) without its entry does not
 * compile; the places that list algorithms (the state hash, the state view, the script's letters and
 * pieces, overrides, the reseed plan) read it.
 *
 * Adding an algorithm: its name in `ALGORITHMS` and its rules in `ALGORITHM_RULES` (@tally/policy);
 * here its entry (maths and codec beside it, e.g. gcra.ts); its Lua piece under lua/algorithms/ with
 * a legend; its literal in the control contract (registry.spec.ts compares the lists); its walk in
 * test/integration/algorithm-parity.test.ts; and, if the SDK runs it, the client's local maths.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
const TOKENS = /^t(\d+):(\d+)$/;
const COUNTERS = /^(\d+):(\d+)(?::(\d+))?$/;

/**
 * fixed_window and calendar_month: `<b>:<c>`; sliding_window `<b>:<c>:<p>`. The counters read each
 * other's state, as they shared the fields `b` and `c` once (a reload from fixed_window to
 * sliding_window keeps the count); a token bucket and a counter never read each other's.
 */
function counterCodec(withPrevious: boolean): StateCodec {
  return {
    unpack: (value): Record<string, string> => {
      const m = COUNTERS.exec(value);
      if (m === null) return {};
      return withPrevious && m[3] !== undefined ? { b: m[1], c: m[2], p: m[3] } : { b: m[1], c: m[2] };
    },
    pack: (s) => (withPrevious ? `${s.b ?? 0}:${s.c ?? 0}:${s.p ?? 0}` : `${s.b ?? 0}:${s.c ?? 0}`),
  };
}

/** Sums per bucket: the current one, and the previous one when it counts (sliding windows). */
function bucketSums(
  bucketOf: (timeMs: number) => number,
  bucket: number,
  previous: boolean,
  ttlMs: number,
): () => ReseedFold {
  return () => {
    let count = 0;
    let before = 0;
    return {
      add: (timeMs, cost) => {
        const b = bucketOf(timeMs);
        if (b === bucket) count += cost;
        else if (previous && b === bucket - 1) before += cost;
      },
      result: () => ({ bucket, count, previous: before, ttlMs }),
    };
  };
}

/** Windows of an hour or more, aligned to epoch multiples of their period. */
const alignedReseed = (previous: boolean): ReseedRule => ({
  plan: (spec, nowMs) => {
    if (spec.periodMs < HOUR_MS) return undefined; // refills within the hour anyway
    const bucket = Math.floor(nowMs / spec.periodMs);
    const startMs = bucket * spec.periodMs;
    const bucketOf = (t: number) => Math.floor(t / spec.periodMs);
    return {
      sinceMs: previous ? startMs - spec.periodMs : startMs,
      bucket,
      previous,
      fold: bucketSums(bucketOf, bucket, previous, 2 * spec.periodMs),
    };
  },
});

const counterView = (s: Readonly<Record<string, string>>) => {
  const n = numbers(s);
  return { bucket: n.b ?? 0, count: n.c ?? 0 };
};

export const ALGORITHM_REGISTRY: { readonly [A in Algorithm]: AlgorithmEntry } = {
  fixed_window: {
    letter: 'f',
    lua: 'counters.lua',
    state: counterCodec(false),
    evaluate: fixedWindow,
    counters: counterView,
    reseed: alignedReseed(false),
    clientLocal: true,
  },
  sliding_window: {
    letter: 's',
    lua: 'counters.lua',
    state: counterCodec(true),
    evaluate: slidingWindow,
    counters: (s) => {
      const n = numbers(s);
      return { bucket: n.b ?? 0, current: n.c ?? 0, previous: n.p ?? 0 };
    },
    reseed: alignedReseed(true),
    clientLocal: true,
  },
  calendar_month: {
    letter: 'c',
    lua: 'counters.lua',
    state: counterCodec(false),
    evaluate: calendarMonth,
    counters: counterView,
    reseed: {
      plan: (_spec, nowMs) => {
        const month = utcMonthOf(nowMs);
        const ttlMs = month.endMs - nowMs + DAY_MS;
        const bucketOf = (t: number) => utcMonthOf(t).index;
        return {
          sinceMs: month.startMs,
          bucket: month.index,
          previous: false,
          fold: bucketSums(bucketOf, month.index, false, ttlMs),
        };
      },
    },
    clientLocal: false,
  },
  token_bucket: {
    letter: 't',
    lua: 'token-bucket.lua',
    state: {
      unpack: (value): Record<string, string> => {
        const m = TOKENS.exec(value);
        return m === null ? {} : { t: m[1], ts: m[2] };
      },
      pack: (s) => `t${s.t ?? 0}:${s.ts ?? 0}`,
    },
    evaluate: tokenBucket,
    counters: (s, periodMs) => {
      const n = numbers(s);
      return { tokens: (n.t ?? 0) / periodMs, updated_ms: n.ts ?? 0 };
    },
    reseed: { skip: 'token bucket (a level, not a sum of usage)' },
    clientLocal: true,
  },
  concurrency: {
    letter: 'n',
    lua: undefined, // decide.lua's section "Concurrency windows and leases"
    state: undefined, // a sorted set of leases per window (keys.ts windowKey)
    evaluate: concurrencyWindow,
    counters: () => ({}), // the state view reads the sorted set itself (policy-state.ts)
    reseed: { skip: 'concurrency (leases in flight, not a sum of usage)' },
    clientLocal: false,
  },
  gcra: GCRA,
};

/** The entry of a window's algorithm. */
export function algorithmOf(algorithm: Algorithm): AlgorithmEntry {
  return ALGORITHM_REGISTRY[algorithm];
}

/** The window maths through the registry (window-math.ts describes what they share). */
export function evaluateWindow(
  spec: WindowMathSpec,
  state: WindowState,
  nowMs: number,
  cost: number,
): WindowResult {
  return ALGORITHM_REGISTRY[spec.algorithm].evaluate(spec, state, nowMs, cost);
}
