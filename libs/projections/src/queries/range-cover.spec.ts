import { describe, expect, it } from 'vitest';
import { nextBucketStart } from '../fold/granularity';
import { coverRange, type CoverBucket } from './range-cover';

const ms = (iso: string) => Date.parse(iso);
const show = (cover: CoverBucket[]) =>
  cover.map((b) => `${b.granularity} ${new Date(b.start).toISOString()}`);

describe(coverRange.name, () => {
  it('uses minutes, hours and days only at the edges and whole months inside', () => {
    const sut = coverRange(ms('2024-01-31T22:58:00Z'), ms('2024-04-01T01:02:00Z'));
    expect(show(sut)).toEqual([
      'minute 2024-01-31T22:58:00.000Z',
      'minute 2024-01-31T22:59:00.000Z',
      'hour 2024-01-31T23:00:00.000Z',
      'month 2024-02-01T00:00:00.000Z',
      'month 2024-03-01T00:00:00.000Z',
      'hour 2024-04-01T00:00:00.000Z',
      'minute 2024-04-01T01:00:00.000Z',
      'minute 2024-04-01T01:01:00.000Z',
    ]);
  });

  it('is a single bucket when the range is one', () => {
    expect(show(coverRange(ms('2024-02-29T00:00:00Z'), ms('2024-03-01T00:00:00Z')))).toEqual([
      'day 2024-02-29T00:00:00.000Z',
    ]);
  });

  it('is empty for an empty range', () => {
    expect(coverRange(ms('2024-02-29T00:00:00Z'), ms('2024-02-29T00:00:00Z'))).toEqual([]);
  });

  it('tiles any range exactly, contiguously and with few reads', () => {
    // given pseudo-random minute-aligned ranges of up to ~3 years (deterministic seed)
    let seed = 42;
    const random = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31), seed % n);
    for (let i = 0; i < 200; i++) {
      const from = ms('2023-01-01T00:00:00Z') + random(1_000_000) * 60_000;
      const to = from + random(1_500_000) * 60_000;
      const sut = coverRange(from, to);
      // then the buckets follow each other with no gap or overlap from `from` to `to`
      let at = from;
      for (const bucket of sut) {
        expect(bucket.start).toBe(at);
        at = nextBucketStart(bucket.start, bucket.granularity);
      }
      expect(at).toBe(to);
      expect(sut.length).toBeLessThanOrEqual(2 * (59 + 23 + 30) + 36 + 1);
    }
  });

  it('refuses ends that are not minute-aligned', () => {
    expect(() => coverRange(ms('2024-01-01T00:00:30Z'), ms('2024-01-02T00:00:00Z'))).toThrow(RangeError);
  });
});
