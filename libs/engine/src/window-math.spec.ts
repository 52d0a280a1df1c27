import type { Algorithm } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { evaluateWindow } from './algorithms/registry';
import type { WindowMathSpec, WindowState } from './window-math';

const T0 = Date.UTC(2026, 10, 30, 9, 0, 0); // a multiple of every period used below
const MINUTE = 60_000;

/** Spend `units` one decision at a time at `now`, threading the state. */
function spend(spec: WindowMathSpec, units: number, now: number, state: WindowState = {}): WindowState {
  let s = state;
  for (let i = 0; i < units; i++) {
    const r = evaluateWindow(spec, s, now, 1);
    expect(r.allowed).toBe(true);
    s = r.nextState;
  }
  return s;
}

/** Spend up to `units` one at a time, stopping at the first denial. */
function fill(spec: WindowMathSpec, units: number, now: number, state: WindowState = {}): WindowState {
  let s = state;
  for (let i = 0; i < units; i++) {
    const r = evaluateWindow(spec, s, now, 1);
    if (!r.allowed) break;
    s = r.nextState;
  }
  return s;
}

describe(evaluateWindow.name, () => {
  const algorithms: Algorithm[] = ['fixed_window', 'sliding_window', 'token_bucket', 'calendar_month'];

  describe.each(algorithms)('%s around load factor 1.0', (algorithm) => {
    const spec: WindowMathSpec = { algorithm, limit: 10, periodMs: MINUTE };
    // given 4 units spent, 6 remain
    const state = spend(spec, 4, T0);

    it.each([
      { cost: 5, allowed: true, remaining: 1 },
      { cost: 6, allowed: true, remaining: 0 },
      { cost: 7, allowed: false, remaining: 6 },
    ])(
      'cost $cost with 6 remaining → allowed $allowed, remaining $remaining',
      ({ cost, allowed, remaining }) => {
        const sut = evaluateWindow(spec, state, T0, cost);
        expect(sut).toMatchObject({ allowed, remaining });
        // a denial changes nothing; an allow is reflected in a peek right after
        if (!allowed) expect(sut.nextState).toBe(state);
        expect(evaluateWindow(spec, sut.nextState, T0, 0).remaining).toBe(remaining);
        expect(sut.retryAfterMs > 0).toBe(!allowed);
      },
    );

    it('a peek (cost 0) allows, reports the remaining units and keeps the state', () => {
      const sut = evaluateWindow(spec, state, T0, 0);
      expect(sut).toMatchObject({ allowed: true, remaining: 6, retryAfterMs: 0 });
      expect(sut.nextState).toBe(state);
    });

    it('never reports a negative remaining', () => {
      const full = spend(spec, 10, T0);
      expect(evaluateWindow(spec, full, T0, 1)).toMatchObject({ allowed: false, remaining: 0 });
    });
  });

  describe('retry-after is exact: the same cost fits at now + retry and not 1 ms earlier', () => {
    const cases: {
      algorithm: Algorithm;
      limit: number;
      periodMs: number;
      spent: number;
      at: number;
      cost: number;
    }[] = [];
    for (const algorithm of ['fixed_window', 'sliding_window', 'token_bucket'] as const) {
      for (const [limit, periodMs] of [
        [10, MINUTE],
        [7, 1_000],
        [100, 3_600_000],
        [3, 1],
      ]) {
        for (const spent of [limit, limit - 1]) {
          for (const at of [0, 1, Math.floor(periodMs / 3), periodMs - 1]) {
            for (const cost of [1, limit]) cases.push({ algorithm, limit, periodMs, spent, at, cost });
          }
        }
      }
    }

    function scenario(c: (typeof cases)[number]) {
      const spec: WindowMathSpec = { algorithm: c.algorithm, limit: c.limit, periodMs: c.periodMs };
      // given the previous bucket half used and up to `spent` units in the current one
      const before = fill(spec, Math.floor(c.limit / 2), T0 - c.periodMs);
      const state = fill(spec, c.spent, T0, before);
      const now = T0 + Math.min(c.at, c.periodMs - 1);
      return { spec, state, now, sut: evaluateWindow(spec, state, now, c.cost) };
    }

    it('mostly denies in these scenarios (else the table below proves little)', () => {
      expect(cases.filter((c) => !scenario(c).sut.allowed).length).toBeGreaterThan(cases.length * 0.5);
    });

    it.each(cases)('$algorithm limit $limit/$periodMs ms, $spent spent, +$at ms, cost $cost', (c) => {
      const { spec, state, now, sut } = scenario(c);
      if (sut.allowed) return expect(sut.retryAfterMs).toBe(0);
      expect(sut.retryAfterMs).toBeGreaterThan(0);
      expect(evaluateWindow(spec, state, now + sut.retryAfterMs, c.cost).allowed).toBe(true);
      expect(evaluateWindow(spec, state, now + sut.retryAfterMs - 1, c.cost).allowed).toBe(false);
    });
  });

  describe('fixed_window', () => {
    const spec: WindowMathSpec = { algorithm: 'fixed_window', limit: 10, periodMs: MINUTE };

    it('is aligned to epoch multiples of the period and resets at the boundary', () => {
      const state = spend(spec, 10, T0 + 59_999);
      expect(evaluateWindow(spec, state, T0 + 59_999, 1)).toMatchObject({
        allowed: false,
        resetMs: 1,
        retryAfterMs: 1,
      });
      expect(evaluateWindow(spec, state, T0 + MINUTE, 1)).toMatchObject({
        allowed: true,
        remaining: 9,
        resetMs: MINUTE,
      });
    });

    it('stores the bucket index and the count, expiring after two periods', () => {
      const sut = evaluateWindow(spec, {}, T0 + 5, 3);
      expect(sut.nextState).toEqual({ b: T0 / MINUTE, c: 3 });
      expect(sut.ttlMs).toBe(2 * MINUTE);
    });
  });

  describe('sliding_window', () => {
    const spec: WindowMathSpec = { algorithm: 'sliding_window', limit: 10, periodMs: MINUTE };

    it('weights the previous bucket by the part of it still inside the window', () => {
      // given 10 units in the previous bucket, a quarter into the current one 7.5 still count; a cost
      // of 3 fits once prev's weight is ≤ 7, i.e. 3 s later (10 × (60 − 15 − 3)/60 = 7)
      const state = spend(spec, 10, T0 - 1);
      const sut = evaluateWindow(spec, state, T0 + MINUTE / 4, 2);
      expect(sut).toMatchObject({ allowed: true, remaining: 0 });
      expect(sut.nextState).toEqual({ b: T0 / MINUTE, c: 2, p: 10 });
      expect(evaluateWindow(spec, state, T0 + MINUTE / 4, 3)).toMatchObject({
        allowed: false,
        retryAfterMs: 3_000,
      });
    });

    it('forgets a bucket two periods old', () => {
      const state = spend(spec, 10, T0 - MINUTE - 1);
      expect(evaluateWindow(spec, state, T0, 10)).toMatchObject({ allowed: true, remaining: 0 });
    });

    it('resets once everything counted has slid out', () => {
      expect(evaluateWindow(spec, {}, T0 + 10_000, 0).resetMs).toBe(0);
      expect(evaluateWindow(spec, {}, T0 + 10_000, 1).resetMs).toBe(50_000 + MINUTE);
      const prevOnly = spend(spec, 1, T0 - 1);
      expect(evaluateWindow(spec, prevOnly, T0 + 10_000, 0).resetMs).toBe(50_000);
    });
  });

  describe('token_bucket', () => {
    const spec: WindowMathSpec = { algorithm: 'token_bucket', limit: 100, periodMs: 1_000 };

    it('starts full and refills limit/period continuously, up to the capacity', () => {
      const empty = spend(spec, 100, T0);
      expect(evaluateWindow(spec, empty, T0, 1)).toMatchObject({
        allowed: false,
        remaining: 0,
        retryAfterMs: 10,
        resetMs: 1_000,
      });
      expect(evaluateWindow(spec, empty, T0 + 15, 0).remaining).toBe(1);
      expect(evaluateWindow(spec, empty, T0 + 400, 0)).toMatchObject({ remaining: 40, resetMs: 600 });
      expect(evaluateWindow(spec, empty, T0 + 5_000, 0).remaining).toBe(100);
    });

    it('keeps tokens × period as an exact integer and never moves ts backwards', () => {
      const sut = evaluateWindow(spec, { t: 50_000, ts: T0 + 10 }, T0, 1);
      expect(sut.nextState).toEqual({ t: 49_000, ts: T0 + 10 });
      expect(sut.ttlMs).toBe(1_000);
    });
  });

  describe('calendar_month', () => {
    const spec: WindowMathSpec = { algorithm: 'calendar_month', limit: 1_000, periodMs: 31 * 86_400_000 };

    it('counts per UTC calendar month and resets at its end', () => {
      const lastMs = Date.UTC(2026, 1, 28, 23, 59, 59, 999); // 2026-02 has 28 days
      const state = spend(spec, 1, lastMs, { b: 2026 * 12 + 1, c: 999 });
      expect(evaluateWindow(spec, state, lastMs, 1)).toMatchObject({
        allowed: false,
        resetMs: 1,
        retryAfterMs: 1,
      });
      const march = evaluateWindow(spec, state, lastMs + 1, 1);
      expect(march).toMatchObject({ allowed: true, remaining: 999, resetMs: 31 * 86_400_000 });
      expect(march.nextState).toEqual({ b: 2026 * 12 + 2, c: 1 });
    });
  });
});
