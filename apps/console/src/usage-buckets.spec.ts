import { describe, expect, it } from 'vitest';
import { bucketStarts, costPerPolicy, MAX_BUCKETS } from './usage-buckets';

const at = (iso: string) => Date.parse(iso);

describe('bucketStarts', () => {
  it('lists every minute of the range from the first bucket boundary, empty ones included', () => {
    expect(bucketStarts('minute', at('2026-12-01T10:00:30Z'), at('2026-12-01T10:03:00Z'))).toEqual([
      at('2026-12-01T10:00:00Z'),
      at('2026-12-01T10:01:00Z'),
      at('2026-12-01T10:02:00Z'),
    ]);
  });

  it('steps calendar months in UTC', () => {
    expect(bucketStarts('month', at('2026-01-15T00:00:00Z'), at('2026-03-01T00:00:00Z'))).toEqual([
      at('2026-01-01T00:00:00Z'),
      at('2026-02-01T00:00:00Z'),
    ]);
  });

  it('gives up past the most it draws', () => {
    expect(bucketStarts('minute', 0, (MAX_BUCKETS + 1) * 60_000)).toBeNull();
  });
});

describe('costPerPolicy', () => {
  it('is one series per policy on the shared axis, a bucket it did not use as 0', () => {
    const starts = [at('2026-12-01T10:00:00Z'), at('2026-12-01T10:01:00Z'), at('2026-12-01T10:02:00Z')];
    const sut = costPerPolicy(
      [
        { start: '2026-12-01T10:00:00Z', policy: 'b', cost: 3 },
        { start: '2026-12-01T10:00:00Z', policy: 'a', cost: 1 },
        { start: '2026-12-01T10:02:00Z', policy: 'a', cost: 5 },
      ],
      starts,
    );
    expect(sut).toEqual([
      { label: 'a', values: [1, 0, 5] },
      { label: 'b', values: [3, 0, 0] },
    ]);
  });
});
