import { describe, expect, it } from 'vitest';
import { LocalLimiter, UNFIT_RETRY_AFTER_MS, type LocalCheck, type WindowEvaluator } from './local-limiter';
import { fixedWindow } from './windows';

const T = 1_700_000_040_000; // a multiple of a minute

/** A fixed-window evaluator that records the specs and costs it is asked about. */
function recording(): {
  evaluate: WindowEvaluator<string>;
  calls: { limit: number; burst?: number; cost: number }[];
} {
  const calls: { limit: number; burst?: number; cost: number }[] = [];
  return {
    calls,
    evaluate: (spec, state, nowMs, cost) => {
      calls.push({ limit: spec.limit, ...(spec.burst !== undefined && { burst: spec.burst }), cost });
      return fixedWindow(spec, state, nowMs, cost);
    },
  };
}

describe(LocalLimiter.name, () => {
  it("hands its user's maths the share of the limit and of the burst", () => {
    const { evaluate, calls } = recording();
    const sut = new LocalLimiter({ share: 3, maxKeys: 10 }, evaluate);
    const check: LocalCheck = {
      id: 'k',
      windows: [{ name: 'w', algorithm: 'any', limit: 10, periodMs: 60_000, burst: 7 }],
    };

    sut.decide([check], 2, T);

    expect(calls).toEqual([{ limit: 3, burst: 2, cost: 2 }]);
  });

  it('never asks the maths about a cost above the share: a peek, then a denial with the unfit wait', () => {
    const { evaluate, calls } = recording();
    const sut = new LocalLimiter({ share: 2, maxKeys: 10 }, evaluate);
    const check: LocalCheck = {
      id: 'k',
      windows: [{ name: 'w', algorithm: 'any', limit: 10, periodMs: 60_000 }],
    };

    const verdict = sut.decide([check], 6, T);

    expect(calls).toEqual([{ limit: 5, cost: 0 }]);
    expect(verdict).toMatchObject({
      kind: 'denied',
      check: 0,
      window: 0,
      results: [[{ allowed: false, remaining: 5, retryAfterMs: UNFIT_RETRY_AFTER_MS }]],
    });
    expect(sut.size).toBe(0);
  });

  it('counts what it allows, with the maths it was given, until the share is spent', () => {
    const sut = new LocalLimiter({ share: 1, maxKeys: 10 }, recording().evaluate);
    const check: LocalCheck = {
      id: 'k',
      windows: [{ name: 'w', algorithm: 'any', limit: 2, periodMs: 60_000 }],
    };

    const kinds = [1, 2, 3].map(() => sut.decide([check], 1, T).kind);

    expect(kinds).toEqual(['allowed', 'allowed', 'denied']);
    expect(sut.size).toBe(1);
  });
});
