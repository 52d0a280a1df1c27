import { addBuckets, bucketCount, bucketStart, isGranularity, type Granularity } from '../fold/granularity';

/** A half-open interval [fromMs, toMs) whose ends are bucket starts of its granularity. */
export interface BucketRange {
  readonly granularity: Granularity;
  readonly fromMs: number;
  readonly toMs: number;
}

/** One invalid query parameter. */
export interface QueryError {
  readonly field: string;
  readonly message: string;
}

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: QueryError[] };

/** A leap year of minutes: long enough for any sensible query, short enough to page through. */
export const MAX_RANGE_BUCKETS = 366 * 24 * 60;

/** Without `from`, this many buckets up to `to`: an hour of minutes, a day of hours, a month of days, a year of months. */
export const DEFAULT_RANGE_BUCKETS: Readonly<Record<Granularity, number>> = {
  minute: 60,
  hour: 24,
  day: 31,
  month: 12,
};

const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2}))?$/;

/**
 * Epoch ms of an ISO 8601 instant: `2026-11-30T09:00:00Z`, with an offset, seconds and fraction
 * optional, or a bare date (midnight UTC). A time without a zone is refused rather than read in the
 * server's zone, and impossible dates (`2026-02-30`) are refused rather than rolled over.
 */
export function parseInstant(text: string): number | null {
  const m = INSTANT.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', zone = 'Z'] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  const offset = zone === 'Z' ? 0 : offsetMinutes(zone);
  if (offset === null) return null;
  const utc = new Date(0);
  // setUTCFullYear keeps years 0..99 literal (Date.UTC would map them to 1900..1999).
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offset * 60_000;
}

/**
 * Validates `granularity`, `from`, `to` of a usage query and widens them to whole buckets: the range
 * covers every bucket that overlaps [from, to). `to` defaults to now (so the current bucket is in),
 * `from` to `DEFAULT_RANGE_BUCKETS` before `to`. Every problem is listed.
 */
export function parseUsageRange(
  query: { readonly granularity?: string; readonly from?: string; readonly to?: string },
  nowMs: number,
): Parsed<BucketRange> {
  const errors: QueryError[] = [];
  const granularity = query.granularity ?? 'hour';
  if (!isGranularity(granularity)) {
    errors.push({ field: 'granularity', message: 'granularity must be one of minute, hour, day, month' });
  }
  const from = query.from === undefined ? undefined : parseInstant(query.from);
  const to = query.to === undefined ? nowMs : parseInstant(query.to);
  if (from === null) errors.push({ field: 'from', message: 'from must be an ISO 8601 time with a zone' });
  if (to === null) errors.push({ field: 'to', message: 'to must be an ISO 8601 time with a zone' });
  if (errors.length > 0 || !isGranularity(granularity) || from === null || to === null) {
    return { ok: false, errors };
  }
  if (from !== undefined && from >= to) {
    return { ok: false, errors: [{ field: 'from', message: 'from must be before to' }] };
  }
  const toMs = addBuckets(to - 1, granularity, 1);
  const fromMs =
    from === undefined
      ? addBuckets(toMs, granularity, -DEFAULT_RANGE_BUCKETS[granularity])
      : bucketStart(from, granularity);
  if (fromMs < 0) return { ok: false, errors: [{ field: 'from', message: 'from must not be before 1970' }] };
  if (bucketCount(fromMs, toMs, granularity) > MAX_RANGE_BUCKETS) {
    return {
      ok: false,
      errors: [
        { field: 'to', message: `the range spans more than ${MAX_RANGE_BUCKETS} ${granularity} buckets` },
      ],
    };
  }
  return { ok: true, value: { granularity, fromMs, toMs } };
}

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

function offsetMinutes(zone: string): number | null {
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return null;
  return (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
}
