import { describe, expect, it } from 'vitest';
import { MAX_AGGREGATE, MAX_AGGREGATE_DIGITS, parseExactCounter } from './exact-counter';

describe(parseExactCounter.name, () => {
  it('reads decimal counters up to 2^53 − 1 exactly', () => {
    expect(['0', '7', '0042', '9007199254740991'].map(parseExactCounter)).toEqual([0, 7, 42, MAX_AGGREGATE]);
    expect(MAX_AGGREGATE_DIGITS).toBe('9007199254740991');
  });

  it('refuses what a double would round, and anything that is not digits', () => {
    const refused = [
      '9007199254740992',
      '9007199254740993',
      '99999999999999999',
      '',
      '-1',
      '1.5',
      '1e3',
      ' 1',
      '0x10',
    ];
    expect(refused.map(parseExactCounter)).toEqual(refused.map(() => null));
  });
});
