import { describe, expect, it } from 'vitest';
import { mergeTotals, isZeroTotals, ZERO_TOTALS } from './totals';
import { readUsageHash } from './usage-hash';

describe(readUsageHash.name, () => {
  it('groups cost and count fields by name and ignores foreign fields', () => {
    const sut = readUsageHash({
      'cost:a': '7',
      'count:a': '2',
      'count:b': '1',
      'cost:svc:42': '3',
      junk: '9',
      'cost:x': 'NaN',
    });
    expect([...sut]).toEqual([
      ['a', { cost: 7, count: 2 }],
      ['b', { cost: 0, count: 1 }],
      ['svc:42', { cost: 3, count: 0 }],
    ]);
  });
});

describe(mergeTotals.name, () => {
  it('sums any number of totals', () => {
    expect(mergeTotals({ cost: 1, count: 1 }, { cost: 4, count: 2 }, ZERO_TOTALS)).toEqual({
      cost: 5,
      count: 3,
    });
    expect(mergeTotals()).toEqual(ZERO_TOTALS);
    expect(isZeroTotals(mergeTotals())).toBe(true);
    expect(isZeroTotals({ cost: 0, count: 1 })).toBe(false);
  });
});
