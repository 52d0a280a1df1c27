import { describe, expect, it } from 'vitest';
import { bucketRows, formatInstant } from './usage-page';

const START = Date.parse('2026-11-30T09:00:00Z');

describe(formatInstant.name, () => {
  it('writes whole seconds without a fraction, as the contract does, and keeps milliseconds otherwise', () => {
    expect(formatInstant(START)).toBe('2026-11-30T09:00:00Z');
    expect(formatInstant(START + 5)).toBe('2026-11-30T09:00:00.005Z');
  });
});

describe(bucketRows.name, () => {
  const totals = new Map([
    ['zeta', { cost: 1, count: 1 }],
    ['_all', { cost: 9, count: 5 }],
    ['alpha', { cost: 8, count: 4 }],
    ['empty', { cost: 0, count: 0 }],
  ]);

  it('lists every policy with usage by name, without the all-policies aggregate', () => {
    expect(bucketRows(START, totals, undefined)).toEqual([
      { start: '2026-11-30T09:00:00Z', policy: 'alpha', cost: 8, count: 4 },
      { start: '2026-11-30T09:00:00Z', policy: 'zeta', cost: 1, count: 1 },
    ]);
  });

  it('lists only the policy asked for, and nothing for an empty bucket', () => {
    expect(bucketRows(START, totals, 'zeta')).toEqual([
      { start: '2026-11-30T09:00:00Z', policy: 'zeta', cost: 1, count: 1 },
    ]);
    expect(bucketRows(START, totals, 'empty')).toEqual([]);
    expect(bucketRows(START, new Map(), 'nope')).toEqual([]);
  });
});
