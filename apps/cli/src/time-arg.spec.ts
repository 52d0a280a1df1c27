import { describe, expect, it } from 'vitest';
import { parseTimeArg } from './time-arg';

const NOW = Date.UTC(2026, 10, 30, 9, 30, 0);

describe(parseTimeArg.name, () => {
  it.each([
    ['2026-11-30T09:00:00Z', Date.UTC(2026, 10, 30, 9)],
    ['2026-11-30T09:00:00.250Z', Date.UTC(2026, 10, 30, 9) + 250],
    ['2026-11-30T09:00Z', Date.UTC(2026, 10, 30, 9)],
    ['2026-11-30T10:00:00+01:00', Date.UTC(2026, 10, 30, 9)],
    ['2026-11-30T08:30:00-00:30', Date.UTC(2026, 10, 30, 9)],
    ['2026-11-30', Date.UTC(2026, 10, 30)],
    ['now', NOW],
    ['now-1h', NOW - 3_600_000],
    ['now-7d', NOW - 7 * 86_400_000],
  ])('%s → %d', (text, expected) => {
    expect(parseTimeArg(text, NOW)).toBe(expected);
  });

  it.each([
    '2026-11-30T09:00:00',
    '2026-02-30',
    '2026-11-30T24:00Z',
    'yesterday',
    'now-1',
    'now+1h',
    '',
    '1732957200000',
  ])('refuses %j', (text) => {
    expect(parseTimeArg(text, NOW)).toBeUndefined();
  });
});
