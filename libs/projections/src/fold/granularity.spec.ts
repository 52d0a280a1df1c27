import { describe, expect, it } from 'vitest';
import {
  addBuckets,
  bucketCount,
  bucketStart,
  isGranularity,
  nextBucketStart,
  type Granularity,
} from './granularity';

const ms = (iso: string) => Date.parse(iso);

describe(bucketStart.name, () => {
  it.each<[string, Granularity, string]>([
    ['2026-11-30T09:41:59.999Z', 'minute', '2026-11-30T09:41:00.000Z'],
    ['2026-11-30T09:41:00.000Z', 'minute', '2026-11-30T09:41:00.000Z'],
    ['2026-11-30T09:59:59.999Z', 'hour', '2026-11-30T09:00:00.000Z'],
    ['2026-11-30T23:59:59.999Z', 'day', '2026-11-30T00:00:00.000Z'],
    ['2026-12-01T00:00:00.000Z', 'day', '2026-12-01T00:00:00.000Z'],
    ['2026-11-30T23:59:59.999Z', 'month', '2026-11-01T00:00:00.000Z'],
    ['2026-12-01T00:00:00.000Z', 'month', '2026-12-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', 'month', '2026-12-01T00:00:00.000Z'],
    ['2027-01-01T00:00:00.000Z', 'month', '2027-01-01T00:00:00.000Z'],
    // leap years: 2024 and 2000 have Feb 29, 2100 does not
    ['2024-02-29T12:00:00.000Z', 'day', '2024-02-29T00:00:00.000Z'],
    ['2024-02-29T23:59:59.999Z', 'month', '2024-02-01T00:00:00.000Z'],
    ['2024-03-01T00:00:00.000Z', 'month', '2024-03-01T00:00:00.000Z'],
    ['2000-02-29T00:00:00.000Z', 'month', '2000-02-01T00:00:00.000Z'],
    ['2100-02-28T23:59:59.999Z', 'day', '2100-02-28T00:00:00.000Z'],
    ['2100-03-01T00:00:00.000Z', 'day', '2100-03-01T00:00:00.000Z'],
    // before the epoch: floor, not truncation toward zero
    ['1969-12-31T23:59:30.000Z', 'minute', '1969-12-31T23:59:00.000Z'],
    ['1969-12-31T12:00:00.000Z', 'day', '1969-12-31T00:00:00.000Z'],
  ])('%s in %s buckets starts at %s', (at, granularity, expected) => {
    expect(new Date(bucketStart(ms(at), granularity)).toISOString()).toBe(expected);
  });
});

describe(addBuckets.name, () => {
  it.each<[string, Granularity, number, string]>([
    ['2026-11-30T23:59:10Z', 'minute', 1, '2026-12-01T00:00:00.000Z'],
    ['2026-12-31T23:10:00Z', 'hour', 1, '2027-01-01T00:00:00.000Z'],
    ['2024-02-28T05:00:00Z', 'day', 1, '2024-02-29T00:00:00.000Z'],
    ['2023-02-28T05:00:00Z', 'day', 1, '2023-03-01T00:00:00.000Z'],
    ['2026-01-31T10:00:00Z', 'month', 1, '2026-02-01T00:00:00.000Z'],
    ['2026-12-15T00:00:00Z', 'month', 1, '2027-01-01T00:00:00.000Z'],
    ['2026-01-15T00:00:00Z', 'month', -1, '2025-12-01T00:00:00.000Z'],
    ['2026-03-15T00:00:00Z', 'month', -14, '2025-01-01T00:00:00.000Z'],
    ['2026-03-15T00:00:00Z', 'day', -1, '2026-03-14T00:00:00.000Z'],
  ])('%s + %s %s bucket(s) is %s', (at, granularity, n, expected) => {
    expect(new Date(addBuckets(ms(at), granularity, n)).toISOString()).toBe(expected);
  });

  it('nextBucketStart is the exclusive end of the bucket', () => {
    expect(new Date(nextBucketStart(ms('2024-02-10T00:00:00Z'), 'month')).toISOString()).toBe(
      '2024-03-01T00:00:00.000Z',
    );
  });
});

describe(bucketCount.name, () => {
  it.each<[string, string, Granularity, number]>([
    ['2026-11-30T09:00:00Z', '2026-11-30T10:00:00Z', 'minute', 60],
    ['2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z', 'day', 29],
    ['2023-02-01T00:00:00Z', '2023-03-01T00:00:00Z', 'day', 28],
    ['2025-11-01T00:00:00Z', '2027-02-01T00:00:00Z', 'month', 15],
    ['2026-11-30T10:00:00Z', '2026-11-30T09:00:00Z', 'hour', 0],
  ])('[%s, %s) has %s %s buckets', (from, to, granularity, expected) => {
    expect(bucketCount(ms(from), ms(to), granularity)).toBe(expected);
  });
});

describe(isGranularity.name, () => {
  it.each([
    ['minute', true],
    ['month', true],
    ['week', false],
    ['Hour', false],
    [undefined, false],
  ])('isGranularity(%j) is %s', (value, expected) => {
    expect(isGranularity(value)).toBe(expected);
  });
});
