import { decodeCursor, encodeCursor } from './cursor';
import { addBuckets, type Granularity } from '../fold/granularity';
import type { BucketRange, Parsed } from './time-range';

export const DEFAULT_PAGE_SIZE = 500;
export const MAX_PAGE_SIZE = 5000;

/** One page of bucket starts of a range, and the cursor of the next page (null on the last one). */
export interface BucketPage {
  readonly starts: readonly number[];
  readonly nextCursor: string | null;
}

/** A `limit` parameter: an integer 1..`max`, `fallback` when absent. */
export function parseLimit(text: string | undefined, fallback: number, max: number): Parsed<number> {
  if (text === undefined) return { ok: true, value: fallback };
  const size = /^\d{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(size >= 1 && size <= max)) {
    return { ok: false, errors: [{ field: 'limit', message: `limit must be an integer from 1 to ${max}` }] };
  }
  return { ok: true, value: size };
}

/** Bucket starts per usage page: 1..MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE when absent. */
export function parsePageSize(text: string | undefined): Parsed<number> {
  return parseLimit(text, DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
}

/**
 * The bucket starts of one page of `range`, dense (empty buckets included: the caller reads them and
 * may drop the empty ones). The cursor records the query it belongs to (`scope`: e.g. tenant and
 * policy, plus the range), so a cursor replayed against another query is refused, not misread.
 */
export function bucketPage(
  range: BucketRange,
  options: { readonly pageSize: number; readonly cursor?: string; readonly scope?: string },
): Parsed<BucketPage> {
  const scope = options.scope ?? '';
  let at = range.fromMs;
  if (options.cursor !== undefined) {
    const state = decodeCursor(options.cursor);
    if (state === null) return invalidCursor('cursor is not valid');
    if (
      state.g !== range.granularity ||
      state.f !== range.fromMs ||
      state.t !== range.toMs ||
      state.s !== scope
    ) {
      return invalidCursor('cursor belongs to another query');
    }
    if (typeof state.n !== 'number' || state.n <= range.fromMs || state.n >= range.toMs) {
      return invalidCursor('cursor is not valid');
    }
    at = state.n;
  }
  const starts: number[] = [];
  for (; at < range.toMs && starts.length < options.pageSize; at = step(at, range.granularity))
    starts.push(at);
  const nextCursor =
    at < range.toMs
      ? encodeCursor({ g: range.granularity, f: range.fromMs, t: range.toMs, s: scope, n: at })
      : null;
  return { ok: true, value: { starts, nextCursor } };
}

function step(ms: number, granularity: Granularity): number {
  return addBuckets(ms, granularity, 1);
}

function invalidCursor(message: string): Parsed<BucketPage> {
  return { ok: false, errors: [{ field: 'cursor', message }] };
}
