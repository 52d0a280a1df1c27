import { describe, expect, it } from 'vitest';
import { MAX_RANGE_BUCKETS, parseInstant, parseUsageRange } from './time-range';

const NOW = Date.parse('2026-11-30T09:41:27.500Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe(parseInstant.name, () => {
  it.each([
    ['2026-11-30T09:00:00Z', '2026-11-30T09:00:00.000Z'],
    ['2026-11-30T09:00Z', '2026-11-30T09:00:00.000Z'],
    ['2026-11-30T09:00:00.5Z', '2026-11-30T09:00:00.500Z'],
    ['2026-11-30T09:00:00.123456789Z', '2026-11-30T09:00:00.123Z'],
    ['2026-11-30T10:30:00+01:30', '2026-11-30T09:00:00.000Z'],
    ['2026-11-30T04:00:00-05:00', '2026-11-30T09:00:00.000Z'],
    ['2026-11-30', '2026-11-30T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59Z', '2000-02-29T23:59:59.000Z'],
  ])('reads %s as %s', (text, expected) => {
    const sut = parseInstant(text);
    expect(sut === null ? null : iso(sut)).toBe(expected);
  });

  it.each([
    ['no zone', '2026-11-30T09:00:00'],
    ['Feb 30', '2026-02-30'],
    ['Feb 29 of a common year', '2023-02-29'],
    ['Feb 29 of 2100', '2100-02-29'],
    ['month 13', '2026-13-01'],
    ['day 0', '2026-11-00'],
    ['hour 24', '2026-11-30T24:00:00Z'],
    ['minute 60', '2026-11-30T09:60:00Z'],
    ['a bad offset', '2026-11-30T09:00:00+25:00'],
    ['epoch ms', '1796029200000'],
    ['an English date', 'Nov 30 2026'],
    ['empty', ''],
    ['a trailing space', '2026-11-30 '],
  ])('refuses %s (%j)', (_, text) => {
    expect(parseInstant(text)).toBeNull();
  });
});

describe(parseUsageRange.name, () => {
  it('widens [from, to) to the buckets that overlap it', () => {
    const sut = parseUsageRange(
      { granularity: 'hour', from: '2026-11-30T06:30:00Z', to: '2026-11-30T09:10:00Z' },
      NOW,
    );
    expect(sut.ok && [sut.value.granularity, iso(sut.value.fromMs), iso(sut.value.toMs)]).toEqual([
      'hour',
      '2026-11-30T06:00:00.000Z',
      '2026-11-30T10:00:00.000Z',
    ]);
  });

  it('treats to as exclusive: a to on a boundary does not pull in the next bucket', () => {
    const sut = parseUsageRange({ granularity: 'day', from: '2026-11-01', to: '2026-12-01' }, NOW);
    expect(sut.ok && iso(sut.value.toMs)).toBe('2026-12-01T00:00:00.000Z');
  });

  it.each([
    ['minute', '2026-11-30T08:42:00.000Z', '2026-11-30T09:42:00.000Z'],
    ['hour', '2026-11-29T10:00:00.000Z', '2026-11-30T10:00:00.000Z'],
    ['day', '2026-10-31T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ['month', '2025-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
  ])('defaults a %s range to recent buckets up to and including now', (granularity, from, to) => {
    const sut = parseUsageRange({ granularity }, NOW);
    expect(sut.ok && [iso(sut.value.fromMs), iso(sut.value.toMs)]).toEqual([from, to]);
  });

  it('defaults the granularity to hour', () => {
    const sut = parseUsageRange({}, NOW);
    expect(sut.ok && sut.value.granularity).toBe('hour');
  });

  it('lists every invalid parameter at once', () => {
    expect(parseUsageRange({ granularity: 'week', from: 'yesterday', to: '2026-02-30' }, NOW)).toEqual({
      ok: false,
      errors: [
        { field: 'granularity', message: 'granularity must be one of minute, hour, day, month' },
        { field: 'from', message: 'from must be an ISO 8601 time with a zone' },
        { field: 'to', message: 'to must be an ISO 8601 time with a zone' },
      ],
    });
  });

  it.each([
    [{ from: '2026-11-30T10:00:00Z', to: '2026-11-30T09:00:00Z' }, 'from', 'from must be before to'],
    [{ from: '2026-11-30T09:00:00Z', to: '2026-11-30T09:00:00Z' }, 'from', 'from must be before to'],
    [{ from: '1969-12-31', to: '1970-01-02' }, 'from', 'from must not be before 1970'],
  ])('refuses %j', (query, field, message) => {
    expect(parseUsageRange({ granularity: 'hour', ...query }, NOW)).toEqual({
      ok: false,
      errors: [{ field, message }],
    });
  });

  it('caps the number of buckets (a leap year of minutes passes, one more does not)', () => {
    const leapYear = parseUsageRange({ granularity: 'minute', from: '2024-01-01', to: '2025-01-01' }, NOW);
    expect(leapYear.ok).toBe(true);
    const sut = parseUsageRange(
      { granularity: 'minute', from: '2024-01-01', to: '2025-01-01T00:01:00Z' },
      NOW,
    );
    expect(sut).toEqual({
      ok: false,
      errors: [{ field: 'to', message: `the range spans more than ${MAX_RANGE_BUCKETS} minute buckets` }],
    });
  });
});
