import { describe, expect, it } from 'vitest';
import { overrideWindow, overrideWindowSpec } from './rls-limit-override';
import { type RlsDescriptor } from './rls.types';

const withLimit = (limit: RlsDescriptor['limit']): RlsDescriptor => ({
  entries: [{ key: 'tenant', value: 'a' }],
  limit,
});

describe(overrideWindow.name, () => {
  it.each<[string, RlsDescriptor['limit'], unknown]>([
    ['no override', undefined, undefined],
    ['null (unset)', null, undefined],
    [
      '100 per MINUTE: a fixed window of 1m',
      { requests_per_unit: 100, unit: 'MINUTE' },
      {
        name: 'envoy_override_minute',
        role: 'sustained',
        algorithm: 'fixed_window',
        limit: 100,
        periodMs: 60_000,
      },
    ],
    [
      'a unit as its enum number (2 = MINUTE)',
      { requests_per_unit: 7, unit: 2 },
      {
        name: 'envoy_override_minute',
        role: 'sustained',
        algorithm: 'fixed_window',
        limit: 7,
        periodMs: 60_000,
      },
    ],
    [
      'SECOND',
      { requests_per_unit: 5, unit: 'SECOND' },
      {
        name: 'envoy_override_second',
        role: 'sustained',
        algorithm: 'fixed_window',
        limit: 5,
        periodMs: 1000,
      },
    ],
    [
      'DAY',
      { requests_per_unit: 5, unit: 'DAY' },
      {
        name: 'envoy_override_day',
        role: 'sustained',
        algorithm: 'fixed_window',
        limit: 5,
        periodMs: 86_400_000,
      },
    ],
    [
      'MONTH: a calendar month',
      { requests_per_unit: 5, unit: 'MONTH' },
      {
        name: 'envoy_override_month',
        role: 'sustained',
        algorithm: 'calendar_month',
        limit: 5,
        periodMs: 31 * 86_400_000,
      },
    ],
  ])('%s', (_case, limit, window) => {
    expect(overrideWindow(withLimit(limit), 'descriptors[0]')).toEqual({ ok: true, window });
  });

  it.each<[string, RlsDescriptor['limit'], string]>([
    [
      'requests_per_unit 0',
      { requests_per_unit: 0, unit: 'MINUTE' },
      'limit.requests_per_unit: must be at least 1',
    ],
    ['requests_per_unit unset', { unit: 'MINUTE' }, 'limit.requests_per_unit: must be at least 1'],
    [
      'YEAR (past the longest period)',
      { requests_per_unit: 1, unit: 'YEAR' },
      'limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH',
    ],
    [
      'UNKNOWN',
      { requests_per_unit: 1, unit: 'UNKNOWN' },
      'limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH',
    ],
    ['no unit', { requests_per_unit: 1 }, 'limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH'],
    [
      'an unknown number',
      { requests_per_unit: 1, unit: 42 },
      'limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH',
    ],
  ])('refuses %s', (_case, limit, message) => {
    expect(overrideWindow(withLimit(limit), 'descriptors[3]')).toEqual({
      ok: false,
      message: `descriptors[3].${message}`,
    });
  });
});

describe(overrideWindowSpec.name, () => {
  it('gives back the unit of an override window and nothing for any other name', () => {
    expect(overrideWindowSpec('envoy_override_hour')).toEqual({
      algorithm: 'fixed_window',
      periodMs: 3_600_000,
    });
    expect(overrideWindowSpec('envoy_override_month')).toMatchObject({ algorithm: 'calendar_month' });
    expect(overrideWindowSpec('envoy_override_year')).toBeUndefined();
    expect(overrideWindowSpec('minute')).toBeUndefined();
  });
});
