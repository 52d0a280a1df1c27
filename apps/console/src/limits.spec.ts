import { describe, expect, it } from 'vitest';
import { limitsText, parseLimits } from './limits';

describe(parseLimits.name, () => {
  it('reads window=limit pairs separated by commas or spaces; 0 is a limit (it blocks)', () => {
    expect(parseLimits('minute=0, hourly=100')).toEqual({ ok: true, limits: { minute: 0, hourly: 100 } });
    expect(parseLimits(' minute=5 ')).toEqual({ ok: true, limits: { minute: 5 } });
  });

  it('refuses an empty field, a missing limit and a negative or fractional one, naming the part', () => {
    expect(parseLimits('  ')).toEqual({ ok: false, error: 'name at least one window: window=limit' });
    for (const part of ['minute', 'minute=', 'minute=-1', 'minute=1.5', '=3'])
      expect(parseLimits(`hourly=1, ${part}`)).toEqual({
        ok: false,
        error: `"${part}" is not window=limit (a whole number ≥ 0)`,
      });
  });
});

describe(limitsText.name, () => {
  it('writes the limits back in window-name order', () => {
    expect(limitsText({ minute: 0, hourly: 100 })).toBe('hourly=100, minute=0');
  });
});
