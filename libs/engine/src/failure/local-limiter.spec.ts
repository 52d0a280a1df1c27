import { describe, expect, it } from 'vitest';
import { EngineLocalLimiter, UNFIT_RETRY_AFTER_MS, type LocalCheck } from './local-limiter';
import { evaluateWindow } from '../algorithms/registry';
import type { WindowMathSpec, WindowResult, WindowState } from '../window-math';

const MINUTE = 60_000;
/** A minute-aligned instant, so fixed windows start at T. */
const T = 1_700_000_040_000;

const fixed = (limit: number, periodMs = MINUTE) =>
  ({ name: 'w', algorithm: 'fixed_window', limit, periodMs }) as const;
const check = (id: string, ...windows: LocalCheck['windows']): LocalCheck => ({ id, windows });

function allowedCount(sut: EngineLocalLimiter, c: LocalCheck, tries: number, now: number): number {
  let allowed = 0;
  for (let i = 0; i < tries; i++) if (sut.decide([c], 1, now).kind === 'allowed') allowed++;
  return allowed;
}

describe(EngineLocalLimiter.name, () => {
  it('allows exactly the limit per fixed window with a share of 1, then denies until the window ends', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 10 });
    const c = check('a', fixed(100));

    expect(allowedCount(sut, c, 250, T + 1_000)).toBe(100);
    const denied = sut.decide([c], 1, T + 1_000);
    expect(denied).toMatchObject({ kind: 'denied', check: 0, window: 0 });
    expect(denied.kind === 'denied' && denied.results[0][0]).toMatchObject({
      remaining: 0,
      retryAfterMs: MINUTE - 1_000,
    });
    // the next window starts empty
    expect(allowedCount(sut, c, 250, T + MINUTE)).toBe(100);
  });

  it('allows ⌊limit / share⌋ per window', () => {
    const sut = new EngineLocalLimiter({ share: 3, maxKeys: 10 });

    expect(sut.shareOf(100)).toBe(33);
    expect(allowedCount(sut, check('a', fixed(100)), 100, T)).toBe(33);
  });

  it("shares a gcra window's burst as its limit: ⌊burst / share⌋ at once, then one per interval", () => {
    // given 10 per second with a burst of 4, over 2 processes: 5 per second (T = 200 ms), 2 at once
    const sut = new EngineLocalLimiter({ share: 2, maxKeys: 10 });
    const c = check('a', { name: 'w', algorithm: 'gcra', limit: 10, periodMs: 1_000, burst: 4 });

    expect(allowedCount(sut, c, 5, T)).toBe(2);
    const denied = sut.decide([c], 1, T);
    expect(denied.kind === 'denied' && denied.results[0][0]).toMatchObject({ retryAfterMs: 200 });
    expect(allowedCount(sut, c, 5, T + 200)).toBe(1);
  });

  it('denies every cost above the share (a share of 0 too) with a short retry, and answers peeks', () => {
    const sut = new EngineLocalLimiter({ share: 8, maxKeys: 10 });
    const c = check('a', fixed(5));

    const verdict = sut.decide([c], 1, T);
    expect(verdict.kind === 'denied' && verdict.results[0][0]).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: UNFIT_RETRY_AFTER_MS,
    });
    expect(sut.decide([c], 0, T).kind).toBe('allowed');
    expect(sut.size).toBe(0);
  });

  it.each<WindowMathSpec['algorithm']>(['fixed_window', 'sliding_window', 'token_bucket', 'calendar_month'])(
    'computes %s exactly as the script’s maths (evaluateWindow) at share 1',
    (algorithm) => {
      // given a random but reproducible sequence of costs and clock steps
      const spec = { algorithm, limit: 10, periodMs: 1_000 } as const;
      const sut = new EngineLocalLimiter({ share: 1, maxKeys: 10 });
      let state: WindowState = {};
      let seed = 7;
      const random = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
      let now = T;
      for (let i = 0; i < 500; i++) {
        now += random(120);
        const cost = random(4);
        // when both decide
        const expected = evaluateWindow(spec, state, now, cost);
        const verdict = sut.decide([check('k', { name: 'w', ...spec })], cost, now);
        // then they agree on everything the caller sees (an expired state may be dropped, not kept)
        const seen = ({ allowed, remaining, resetMs, retryAfterMs }: WindowResult) => ({
          allowed,
          remaining,
          resetMs,
          retryAfterMs,
        });
        expect(verdict.kind === 'overflow' ? verdict : seen(verdict.results[0][0])).toEqual(seen(expected));
        state = expected.nextState;
      }
    },
  );

  it('commits nothing anywhere when one window of one check denies', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 10 });
    const roomy = check('roomy', fixed(100));
    const tight = check('tight', fixed(1));
    expect(sut.decide([tight], 1, T).kind).toBe('allowed');

    expect(sut.decide([roomy, tight], 1, T)).toMatchObject({ kind: 'denied', check: 1 });

    expect(sut.decide([roomy], 0, T)).toMatchObject({ results: [[{ remaining: 100 }]] });
  });

  it('binds the denying window with the longest wait', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 10 });
    const c = check('a', { ...fixed(1, 1_000), name: 'second' }, { ...fixed(1), name: 'minute' });
    sut.decide([c], 1, T);

    expect(sut.decide([c], 1, T + 10)).toMatchObject({ kind: 'denied', window: 1 });
  });

  it('holds no key for peeks and denials', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 10 });

    sut.decide([check('peek', fixed(10))], 0, T);
    sut.decide([check('unfit', fixed(1))], 2, T);

    expect(sut.size).toBe(0);
  });

  it('never holds more than maxKeys: a new key beyond a full table of live keys overflows, uncounted', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 3 });
    for (const id of ['a', 'b', 'c']) expect(sut.decide([check(id, fixed(10))], 1, T).kind).toBe('allowed');

    expect(sut.decide([check('d', fixed(10))], 1, T + 1)).toEqual({ kind: 'overflow', fresh: [0] });
    expect(sut.size).toBe(3);
    // known keys go on being counted
    expect(sut.decide([check('a', fixed(10))], 1, T + 1)).toMatchObject({
      kind: 'allowed',
      results: [[{ remaining: 8 }]],
    });
  });

  it('evicts the least recently used key once its windows no longer matter', () => {
    // given a, b, c of a 1 s sliding window (state kept 2 s); a used again later, so b is the LRU
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 3 });
    const c1 = (id: string) => check(id, { ...fixed(10, 1_000), algorithm: 'sliding_window' });
    sut.decide([c1('a')], 1, T);
    sut.decide([c1('b')], 1, T);
    sut.decide([c1('c')], 1, T + 1_500);
    sut.decide([c1('a')], 1, T + 1_500);

    // when d arrives after b's (and not a's) state expired
    expect(sut.decide([c1('d')], 1, T + 2_000).kind).toBe('allowed');

    // then b was evicted, a and c kept their counts (one unit each, now in the previous bucket)
    expect(sut.size).toBe(3);
    expect(sut.decide([c1('a')], 0, T + 2_000)).toMatchObject({ results: [[{ remaining: 9 }]] });
    expect(sut.decide([c1('c')], 0, T + 2_000)).toMatchObject({ results: [[{ remaining: 9 }]] });
  });

  it('sweeps expired keys behind a live least recently used one', () => {
    // given a long-lived key at the LRU head and short-lived ones behind it
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 3 });
    sut.decide([check('day', fixed(10, 86_400_000))], 1, T);
    sut.decide([check('s1', fixed(10, 1_000))], 1, T);
    sut.decide([check('s2', fixed(10, 1_000))], 1, T);

    expect(sut.decide([check('new', fixed(10, 1_000))], 1, T + 5_000).kind).toBe('allowed');
    expect(sut.size).toBe(2);
  });

  it('starts a key afresh when its policy’s windows changed (a reload)', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 10 });
    sut.decide([check('a', fixed(1))], 1, T);

    expect(sut.decide([check('a', { ...fixed(1), periodMs: 2 * MINUTE })], 1, T).kind).toBe('allowed');
  });

  it('stays within its bound under 100,000 distinct keys', () => {
    const sut = new EngineLocalLimiter({ share: 1, maxKeys: 1_000 });
    const outcomes = { allowed: 0, overflow: 0, denied: 0 };

    for (let i = 0; i < 100_000; i++) outcomes[sut.decide([check(`k${i}`, fixed(10))], 1, T + i).kind]++;

    expect(sut.size).toBe(1_000);
    expect(outcomes).toEqual({ allowed: 1_000, overflow: 99_000, denied: 0 });
  });

  it('refuses a share or bound below 1', () => {
    expect(() => new EngineLocalLimiter({ share: 0, maxKeys: 1 })).toThrow('share must be an integer ≥ 1');
    expect(() => new EngineLocalLimiter({ share: 1, maxKeys: 1.5 })).toThrow(
      'maxKeys must be an integer ≥ 1',
    );
  });
});
