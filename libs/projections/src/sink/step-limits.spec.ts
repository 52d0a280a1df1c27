import { describe, expect, it } from 'vitest';
import type { StepTarget } from './batch-step';
import { StepLimits } from './step-limits';

const AT = Date.parse('2026-11-30T09:41:27.500Z');
const HOUR = Date.parse('2026-11-30T09:00:00Z');
const FIXED: StepTarget = { kind: 'fixed' };
const KEYS = [
  'offsets',
  'meta',
  'versions',
  'audit:~',
  'ids:0900',
  'usage:acme:hour',
  'keys:acme:p:hour',
  'audit:acme',
];
const TARGETS: StepTarget[] = [
  FIXED,
  FIXED,
  FIXED,
  FIXED,
  { kind: 'ids', timeMs: AT },
  { kind: 'usage', tenant: 'acme', granularity: 'hour', start: HOUR },
  { kind: 'keys', tenant: 'acme', policy: 'p', granularity: 'hour', start: HOUR },
  { kind: 'audit', tenant: 'acme' },
];

describe(StepLimits.name, () => {
  it('turns overflows into what is stored, field by field, for the fold to compute the room left', () => {
    const sut = new StepLimits();
    sut.learn(KEYS, TARGETS, [
      { keyIndex: 6, field: 'cost:p', kind: 'overflow', stored: '9007199254740000' },
      { keyIndex: 6, field: 'count:p', kind: 'overflow', stored: '9007199254740991' },
      { keyIndex: 7, field: 'svc', kind: 'overflow', stored: '9007199254740990:12' },
    ]);
    expect(sut.touches('acme')).toBe(true);
    expect(sut.touches('other')).toBe(false);
    expect(sut.totalRoom('acme', 'p', 'hour', HOUR)).toEqual({
      kind: 'stored',
      cost: 9007199254740000,
      count: 9007199254740991,
    });
    expect(sut.totalRoom('acme', '_all', 'hour', HOUR)).toBeUndefined();
    expect(sut.keyRoom('acme', 'p', 'svc', 'hour', HOUR)).toEqual({
      kind: 'stored',
      cost: 9007199254740990,
      count: 12,
    });
    expect(sut.keyRoom('acme', 'p', 'other', 'hour', HOUR)).toBeUndefined();
  });

  it('refuses the cells of corrupt values and every cell of a key of the wrong type', () => {
    const sut = new StepLimits();
    sut.learn(KEYS, TARGETS, [
      { keyIndex: 6, field: 'cost:_all', kind: 'corrupt', stored: 'abc' },
      { keyIndex: 7, field: '', kind: 'wrongtype', stored: '' },
      { keyIndex: 8, field: '', kind: 'wrongtype', stored: '' },
      { keyIndex: 5, field: '', kind: 'wrongtype', stored: '' },
    ]);
    expect(sut.totalRoom('acme', '_all', 'hour', HOUR)).toEqual({
      kind: 'refused',
      reason:
        'corrupt: usage:acme:hour field "cost:_all" holds "abc", not a counter of at most 9007199254740991; replay the namespace',
    });
    expect(sut.keyRoom('acme', 'p', 'any', 'hour', HOUR)).toEqual({
      kind: 'refused',
      reason: 'wrongtype: keys:acme:p:hour is not a hash',
    });
    expect(sut.auditRefusal('acme')).toBe('wrongtype: audit:acme is not a sorted set');
    expect(sut.auditRefusal(null)).toBeUndefined();
    expect(sut.dedupRefusal(HOUR + 59 * 60_000)).toBe('wrongtype: ids:0900 is not a set');
    expect(sut.dedupRefusal(HOUR + 3_600_000)).toBeUndefined();
  });

  it('refuses to blame an event for a namespace-wide key', () => {
    const sut = new StepLimits();
    expect(() =>
      sut.learn(KEYS, TARGETS, [{ keyIndex: 1, field: 't:0', kind: 'corrupt', stored: 'x' }]),
    ).toThrow(/no event to blame/);
  });
});
