/**
 * UTC calendar months from epoch milliseconds, with Howard Hinnant's civil-from-days algorithms
 * (proleptic Gregorian, exact in integer arithmetic). decide.lua carries a line-by-line copy: keep
 * them in step; the integration tests compare both.
 */
const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of the civil date y-m-d. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The civil date of a day number (days since 1970-01-01). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: month <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, month, day };
}

/** The UTC month containing `nowMs`: its index (year*12 + month-1), start and end (exclusive), in ms. */
export function utcMonthOf(nowMs: number): { index: number; startMs: number; endMs: number } {
  const { year, month } = civilFromDays(Math.floor(nowMs / DAY_MS));
  const next = month === 12 ? { year: year + 1, month: 1 } : { year, month: month + 1 };
  return {
    index: year * 12 + month - 1,
    startMs: daysFromCivil(year, month, 1) * DAY_MS,
    endMs: daysFromCivil(next.year, next.month, 1) * DAY_MS,
  };
}
