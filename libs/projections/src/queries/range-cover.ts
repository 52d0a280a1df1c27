import { bucketStart, nextBucketStart, type Granularity } from '../fold/granularity';

/** One bucket of any granularity. */
export interface CoverBucket {
  readonly granularity: Granularity;
  readonly start: number;
}

const COARSEST_FIRST: readonly Granularity[] = ['month', 'day', 'hour', 'minute'];

/**
 * The fewest buckets whose union is exactly [fromMs, toMs): whole months inside the range, days and
 * hours at its edges, minutes only at the very ends. Every event is counted at every granularity,
 * so summing these gives the range's total with a few hundred reads at most (≤ 59+23+30 at each end
 * plus the months), however many minute buckets the range has. Both ends must be minute-aligned.
 */
export function coverRange(fromMs: number, toMs: number): CoverBucket[] {
  if (fromMs % 60_000 !== 0 || toMs % 60_000 !== 0) {
    throw new RangeError(`coverRange needs minute-aligned ends, got ${fromMs}..${toMs}`);
  }
  const cover: CoverBucket[] = [];
  let at = fromMs;
  while (at < toMs) {
    // Buckets nest, so the coarsest bucket that starts here and fits is always part of a minimal cover.
    const granularity =
      COARSEST_FIRST.find((g) => bucketStart(at, g) === at && nextBucketStart(at, g) <= toMs) ?? 'minute';
    cover.push({ granularity, start: at });
    at = nextBucketStart(at, granularity);
  }
  return cover;
}
