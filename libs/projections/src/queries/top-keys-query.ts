import { parseLimit } from './bucket-pages';
import { bucketStart, isGranularity, type Granularity } from '../fold/granularity';
import { parseInstant, type Parsed, type QueryError } from './time-range';
import type { KeyUsage } from './top-keys';

export const DEFAULT_TOP_KEYS_GRANULARITY: Granularity = 'day';
export const DEFAULT_TOP_KEYS_LIMIT = 10;
export const MAX_TOP_KEYS_LIMIT = 1000;

/** `GET /v1/top-keys` parameters as received, already checked for shape by the transport's DTO. */
export interface TopKeysRequest {
  readonly tenant: string;
  readonly policy: string;
  readonly granularity?: string;
  readonly at?: string;
  readonly limit?: string;
}

/** The one bucket a top-keys query reads, and how many keys it lists. */
export interface TopKeysQuery {
  readonly granularity: Granularity;
  /** Start of the bucket of `granularity` that contains `at`. */
  readonly startMs: number;
  readonly limit: number;
}

/** The body of `GET /v1/top-keys`, field for field. */
export interface TopKeysView {
  readonly tenant: string;
  readonly policy: string;
  readonly granularity: Granularity;
  /** Bucket start, `2026-11-30T00:00:00Z`. */
  readonly start: string;
  /** At most `limit` keys, heaviest first (`compareKeyUsage`). */
  readonly keys: readonly KeyUsage[];
  /** How many keys have usage in the bucket (fields of its `keys:` hash), listed or not. */
  readonly distinct_keys: number;
}

/**
 * Validates `granularity` (default day), `at` (ISO 8601 with a zone, default now) and `limit`
 * (1..MAX_TOP_KEYS_LIMIT, default DEFAULT_TOP_KEYS_LIMIT); lists every problem.
 */
export function parseTopKeysQuery(
  query: { readonly granularity?: string; readonly at?: string; readonly limit?: string },
  nowMs: number,
): Parsed<TopKeysQuery> {
  const errors: QueryError[] = [];
  const granularity = query.granularity ?? DEFAULT_TOP_KEYS_GRANULARITY;
  if (!isGranularity(granularity)) {
    errors.push({ field: 'granularity', message: 'granularity must be one of minute, hour, day, month' });
  }
  const at = query.at === undefined ? nowMs : parseInstant(query.at);
  if (at === null) errors.push({ field: 'at', message: 'at must be an ISO 8601 time with a zone' });
  else if (at < 0) errors.push({ field: 'at', message: 'at must not be before 1970' });
  const limit = parseLimit(query.limit, DEFAULT_TOP_KEYS_LIMIT, MAX_TOP_KEYS_LIMIT);
  if (!limit.ok) errors.push(...limit.errors);
  if (errors.length > 0 || !isGranularity(granularity) || at === null || !limit.ok) {
    return { ok: false, errors };
  }
  return { ok: true, value: { granularity, startMs: bucketStart(at, granularity), limit: limit.value } };
}
