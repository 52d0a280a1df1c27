import { describe, expect, it } from 'vitest';
import { mergeTotals, isZeroTotals, ZERO_TOTALS } from '../fold/totals';
import { parseUsageCounter, readKeyUsageHash, readUsageHash } from './usage-hash';

describe(readUsageHash.name, () => {
  it('tells each policy whose value is not a counter, and leaves it out', () => {
    const invalid: string[] = [];
    const sut = readUsageHash(
      { 'cost:a': '7', 'count:a': '-1', 'cost:b': '1.5', 'count:b': '2', 'cost:c': '3', junk: 'x' },
      (policy) => invalid.push(policy),
    );
    expect(invalid).toEqual(['a', 'b']);
    expect([...sut]).toEqual([
      ['a', { cost: 7, count: 0 }],
      ['b', { cost: 0, count: 2 }],
      ['c', { cost: 3, count: 0 }],
    ]);
  });

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

describe(parseUsageCounter.name, () => {
  it('reads what HINCRBY stores for a counter that only grows, and nothing else', () => {
    expect(['0', '7', '9007199254740991'].map(parseUsageCounter)).toEqual([0, 7, 9007199254740991]);
    expect(['', '-1', '1.5', '1e3', ' 1', 'NaN', '0x10', '12345678901234567'].map(parseUsageCounter)).toEqual(
      Array(8).fill(null),
    );
  });
});

describe(readKeyUsageHash.name, () => {
  it('reads cost:count per policy key, keys with any characters, and skips malformed values', () => {
    const sut = readKeyUsageHash({
      'svc:42': '7:2',
      k: '0:1',
      bad: '7',
      worse: '1:x',
      max: '9007199254740991:1',
      big: '9007199254740993:1', // past 2^53 − 1: a double would read it as …992
    });
    expect([...sut]).toEqual([
      ['svc:42', { cost: 7, count: 2 }],
      ['k', { cost: 0, count: 1 }],
      ['max', { cost: 9007199254740991, count: 1 }],
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
