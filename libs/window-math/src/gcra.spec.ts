import { describe, expect, it } from 'vitest';
import type { WindowState } from './window-state';
import { gcra } from './gcra';

// 10 per second: T = 100 ms; burst 3: τ = 200 ms
const spec = { algorithm: 'gcra', limit: 10, periodMs: 1_000, burst: 3 } as const;
const NOW = 1_764_669_600_000;

describe(gcra.name, () => {
  it.each<[string, WindowState, number, number, object]>([
    // an empty state is a full burst
    [
      'fresh, cost 1',
      {},
      NOW,
      1,
      { allowed: true, remaining: 2, resetMs: 100, nextState: { tat: NOW + 100, sub: 0 } },
    ],
    ['fresh, the whole burst', {}, NOW, 3, { allowed: true, remaining: 0, resetMs: 300 }],
    ['fresh peek', {}, NOW, 0, { allowed: true, remaining: 3, resetMs: 0, nextState: {} }],
    // TAT 300 ms ahead: 3 × T owed, no room; the next unit fits when TAT − now = 2T
    [
      'full',
      { tat: NOW + 300, sub: 0 },
      NOW,
      1,
      { allowed: false, remaining: 0, resetMs: 300, retryAfterMs: 100 },
    ],
    ['full, cost 2', { tat: NOW + 300, sub: 0 }, NOW, 2, { allowed: false, retryAfterMs: 200 }],
    // a TAT in the past is no debt: lateness is not banked
    [
      'past TAT',
      { tat: NOW - 5_000, sub: 7 },
      NOW,
      1,
      { allowed: true, remaining: 2, nextState: { tat: NOW + 100, sub: 0 } },
    ],
  ])('%s', (_, state, now, cost, expected) => {
    expect(gcra(spec, state, now, cost)).toMatchObject(expected);
  });

  it('keeps the fraction of a millisecond of a non-whole interval (3 per second: T = 333.33… ms)', () => {
    const third = { ...spec, limit: 3 };
    const one = gcra(third, {}, NOW, 1);
    expect(one.nextState).toEqual({ tat: NOW + 333, sub: 1 }); // 333 + 1/3 ms
    const three = gcra(third, gcra(third, one.nextState, NOW, 1).nextState, NOW, 1);
    expect(three.nextState).toEqual({ tat: NOW + 1_000, sub: 0 }); // exactly 1000 ms: no drift
  });

  it('changes nothing when it denies', () => {
    const state = { tat: NOW + 300, sub: 0 };
    expect(gcra(spec, state, NOW, 1).nextState).toBe(state);
  });
});
