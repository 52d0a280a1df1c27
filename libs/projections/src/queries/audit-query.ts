import { decodeCursor, encodeCursor } from './cursor';
import { parseInstant, type Parsed, type QueryError } from './time-range';

export const DEFAULT_AUDIT_LIMIT = 100;
export const MAX_AUDIT_LIMIT = 1000;

/**
 * An audit page request, oldest first from `sinceMs`. Rows share scores (coalesced denials of one
 * second), so the position is (score, how many rows of that score were already returned): exactly
 * `ZRANGE key <afterMs> +inf BYSCORE LIMIT <skip> <limit>`.
 */
export interface AuditQuery {
  readonly sinceMs: number;
  readonly limit: number;
  /** Resume point from the cursor; without one, start at `sinceMs` with skip 0. */
  readonly position: AuditPosition;
}

export interface AuditPosition {
  readonly scoreMs: number;
  readonly skip: number;
}

/** Validates `since` (ISO 8601, default: 24 h before now), `limit` and `cursor`; lists every problem. */
export function parseAuditQuery(
  query: { readonly since?: string; readonly limit?: string; readonly cursor?: string },
  nowMs: number,
): Parsed<AuditQuery> {
  const errors: QueryError[] = [];
  // A cursor carries the `since` it was made for: without `since`, later pages keep the first page's
  // default instead of a "24 h before now" that has moved on (which would refuse the cursor).
  const anchor = query.cursor === undefined ? undefined : decodeCursor(query.cursor)?.a;
  const defaultSince = isWhole(anchor) ? anchor : nowMs - 86_400_000;
  const sinceMs = query.since === undefined ? defaultSince : parseInstant(query.since);
  if (sinceMs === null)
    errors.push({ field: 'since', message: 'since must be an ISO 8601 time with a zone' });
  const limit =
    query.limit === undefined ? DEFAULT_AUDIT_LIMIT : /^\d{1,5}$/.test(query.limit) ? Number(query.limit) : 0;
  if (!(limit >= 1 && limit <= MAX_AUDIT_LIMIT)) {
    errors.push({ field: 'limit', message: `limit must be an integer from 1 to ${MAX_AUDIT_LIMIT}` });
  }
  let position: AuditPosition | null = sinceMs === null ? null : { scoreMs: sinceMs, skip: 0 };
  if (query.cursor !== undefined) {
    const state = decodeCursor(query.cursor);
    const valid =
      state !== null &&
      state.a === sinceMs &&
      isWhole(state.p) &&
      isWhole(state.k) &&
      state.p >= (sinceMs ?? 0);
    if (!valid) errors.push({ field: 'cursor', message: 'cursor is not valid for this query' });
    else position = { scoreMs: state.p as number, skip: state.k as number };
  }
  if (errors.length > 0 || sinceMs === null || position === null) return { ok: false, errors };
  return { ok: true, value: { sinceMs, limit, position } };
}

/**
 * The cursor after a page whose rows had these scores (ascending), or null when the page was not
 * full (nothing more to read).
 */
export function nextAuditCursor(query: AuditQuery, pageScores: readonly number[]): string | null {
  if (pageScores.length < query.limit) return null;
  const last = pageScores[pageScores.length - 1];
  let skip = 0;
  for (let i = pageScores.length - 1; i >= 0 && pageScores[i] === last; i--) skip++;
  // Still on the score we started at: the rows skipped before this page are skipped again, plus these.
  if (last === query.position.scoreMs) skip += query.position.skip;
  return encodeCursor({ a: query.sinceMs, p: last, k: skip });
}

function isWhole(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
