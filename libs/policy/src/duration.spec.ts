import { describe, expect, it } from 'vitest';
import { formatDuration, MAX_PERIOD_MS, parseDuration } from './duration';

describe(parseDuration.name, () => {
  it.each([
    ['1ms', 1],
    ['500ms', 500],
    ['1s', 1000],
    ['15m', 900_000],
    ['24h', 86_400_000],
    ['31d', MAX_PERIOD_MS],
    ['365d', 365 * 86_400_000],
  ])('parses %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    '',
    '0s',
    '01s',
    '1.5s',
    '-1s',
    '1',
    '1 s',
    ' 1s',
    '1S',
    '1w',
    '1mo',
    'ms',
    '1e3ms',
    '99999999999999999d',
  ])('rejects %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe(formatDuration.name, () => {
  it.each([
    [0, '0ms'],
    [1, '1ms'],
    [1500, '1500ms'],
    [1000, '1s'],
    [90_000, '90s'],
    [60_000, '1m'],
    [3_600_000, '1h'],
    [86_400_000, '1d'],
    [MAX_PERIOD_MS, '31d'],
  ])('formats %d as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1, 999, 1000, 61_000, 7_200_000, 172_800_000])
      expect(parseDuration(formatDuration(ms))).toBe(ms);
  });

  it.each([-1, 1.5, Number.NaN])('refuses %d', (ms) => {
    expect(() => formatDuration(ms)).toThrow(RangeError);
  });
});
