import { describe, expect, it } from 'vitest';
import { rateLimitUnitOf } from './rate-limit-unit';

describe(rateLimitUnitOf.name, () => {
  it.each([
    { algorithm: 'token_bucket', periodMs: 1000, unit: 'SECOND' },
    { algorithm: 'fixed_window', periodMs: 60_000, unit: 'MINUTE' },
    { algorithm: 'sliding_window', periodMs: 3_600_000, unit: 'HOUR' },
    { algorithm: 'fixed_window', periodMs: 86_400_000, unit: 'DAY' },
    { algorithm: 'calendar_month', periodMs: 31 * 86_400_000, unit: 'MONTH' },
    { algorithm: 'fixed_window', periodMs: 31 * 86_400_000, unit: undefined },
    { algorithm: 'token_bucket', periodMs: 10_000, unit: undefined },
    { algorithm: 'token_bucket', periodMs: 500, unit: undefined },
    { algorithm: 'fixed_window', periodMs: 120_000, unit: undefined },
  ] as const)('$algorithm over $periodMs ms → $unit', ({ algorithm, periodMs, unit }) => {
    expect(rateLimitUnitOf({ algorithm, periodMs })).toBe(unit);
  });
});
