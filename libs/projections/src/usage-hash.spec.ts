import { describe, expect, it } from 'vitest';
import { mergeTotals, isZeroTotals, ZERO_TOTALS } from './totals';
import { readKeyUsageHash, readUsageHash } from './usage-hash';

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

describe(readKeyUsageHash.name, () => {
  it('reads cost:count per policy key, keys with any characters, and skips malformed values', () => {
    const sut = readKeyUsageHash({
      'svc:42': '7:2',
      k: '0:1',
      bad: '7',
      worse: '1:x',
      big: '9007199254740993:1',
    });
    expect([...sut]).toEqual([
      ['svc:42', { cost: 7, count: 2 }],
      ['k', { cost: 0, count: 1 }],
      ['big', { cost: 9007199254740992, count: 1 }],
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
