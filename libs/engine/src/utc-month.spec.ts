import { describe, expect, it } from 'vitest';
import { civilFromDays, daysFromCivil, utcMonthOf } from './utc-month';

describe('utc-month', () => {
  it('agrees with Date.UTC on every day from 1900 to 2200', () => {
    for (let days = daysFromCivil(1900, 1, 1); days < daysFromCivil(2200, 1, 1); days += 1) {
      const date = new Date(days * 86_400_000);
      const civil = civilFromDays(days);
      const same =
        civil.year === date.getUTCFullYear() &&
        civil.month === date.getUTCMonth() + 1 &&
        civil.day === date.getUTCDate();
      // one expect per mismatch only: 110k expects would make this the slowest unit test
      if (!same || daysFromCivil(civil.year, civil.month, civil.day) !== days) {
        expect({ days, civil }).toEqual({ days, civil: date.toISOString() });
      }
    }
  });

  it.each([
    ['2026-11-30T09:00:00.000Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ['2026-12-31T23:59:59.999Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['2028-02-29T12:00:00.000Z', '2028-02-01T00:00:00.000Z', '2028-03-01T00:00:00.000Z'],
    ['2027-03-01T00:00:00.000Z', '2027-03-01T00:00:00.000Z', '2027-04-01T00:00:00.000Z'],
  ])('puts %s in the month [%s, %s)', (now, start, end) => {
    const sut = utcMonthOf(Date.parse(now));
    expect(new Date(sut.startMs).toISOString()).toBe(start);
    expect(new Date(sut.endMs).toISOString()).toBe(end);
    expect(sut.index).toBe(new Date(start).getUTCFullYear() * 12 + new Date(start).getUTCMonth());
  });
});
