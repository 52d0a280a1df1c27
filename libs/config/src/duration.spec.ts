import { describe, expect, it } from 'vitest';
import { durationMs } from './duration';

describe(durationMs.name, () => {
  it.each([
    ['250ms', 250],
    ['30s', 30_000],
    ['15m', 900_000],
    ['24h', 86_400_000],
    ['30d', 2_592_000_000],
    [' 1h ', 3_600_000],
  ])('reads %s', (text, ms) => {
    expect(durationMs(text)).toBe(ms);
  });

  it.each(['', '10', 'h', '1.5h', '-1s', '1w', '1 h', '9999999999999999d'])('refuses %j', (text) => {
    expect(() => durationMs(text)).toThrow(RangeError);
  });
});
