import { describe, expect, it } from 'vitest';
import { diffProjections, parseUsageCellId, usageCellId, type UsageCell } from './diff-projections';
import type { Totals } from '../fold/totals';

const H9 = Date.parse('2026-11-30T09:00:00Z');
const H10 = Date.parse('2026-11-30T10:00:00Z');

function projection(cells: [UsageCell, Totals][]): Map<string, Totals> {
  return new Map(cells.map(([cell, totals]) => [usageCellId(cell), totals]));
}

describe(diffProjections.name, () => {
  it('is empty for equal projections, and a zero cell equals a missing one', () => {
    const a = projection([
      [
        { tenant: 'acme', policy: 'p', granularity: 'hour', start: H9 },
        { cost: 4, count: 2 },
      ],
    ]);
    const b = projection([
      [
        { tenant: 'acme', policy: 'p', granularity: 'hour', start: H9 },
        { cost: 4, count: 2 },
      ],
      [
        { tenant: 'acme', policy: 'p', granularity: 'hour', start: H10 },
        { cost: 0, count: 0 },
      ],
    ]);
    expect(diffProjections(a, b)).toEqual([]);
  });

  it('lists every differing cell per tenant / policy / bucket, sorted, with both sides', () => {
    const a = projection([
      [
        { tenant: 'zeta', policy: 'p', granularity: 'hour', start: H9 },
        { cost: 1, count: 1 },
      ],
      [
        { tenant: 'acme', policy: 'p', granularity: 'day', start: H9 },
        { cost: 5, count: 2 },
      ],
      [
        { tenant: 'acme', policy: 'p', granularity: 'hour', start: H10 },
        { cost: 3, count: 1 },
      ],
      [
        { tenant: null, policy: 'p', granularity: 'minute', start: H9, key: 'k' },
        { cost: 2, count: 2 },
      ],
    ]);
    const b = projection([
      [
        { tenant: 'acme', policy: 'p', granularity: 'day', start: H9 },
        { cost: 5, count: 3 },
      ],
      [
        { tenant: 'acme', policy: 'p', granularity: 'hour', start: H9 },
        { cost: 2, count: 1 },
      ],
    ]);
    expect(diffProjections(a, b)).toEqual([
      {
        cell: { tenant: null, policy: 'p', granularity: 'minute', start: H9, key: 'k' },
        a: { cost: 2, count: 2 },
        b: { cost: 0, count: 0 },
      },
      {
        cell: { tenant: 'acme', policy: 'p', granularity: 'hour', start: H9 },
        a: { cost: 0, count: 0 },
        b: { cost: 2, count: 1 },
      },
      {
        cell: { tenant: 'acme', policy: 'p', granularity: 'hour', start: H10 },
        a: { cost: 3, count: 1 },
        b: { cost: 0, count: 0 },
      },
      {
        cell: { tenant: 'acme', policy: 'p', granularity: 'day', start: H9 },
        a: { cost: 5, count: 2 },
        b: { cost: 5, count: 3 },
      },
      {
        cell: { tenant: 'zeta', policy: 'p', granularity: 'hour', start: H9 },
        a: { cost: 1, count: 1 },
        b: { cost: 0, count: 0 },
      },
    ]);
  });

  it('refuses map keys that are not cell ids', () => {
    expect(() => diffProjections(new Map([['acme|p', { cost: 1, count: 1 }]]), new Map())).toThrow(TypeError);
  });
});

describe(usageCellId.name, () => {
  it.each<UsageCell>([
    { tenant: 'a|b"c', policy: 'p', granularity: 'month', start: 0 },
    { tenant: null, policy: 'p', granularity: 'day', start: H9, key: 'svc:42' },
  ])('round-trips %j', (cell) => {
    expect(parseUsageCellId(usageCellId(cell))).toEqual(cell);
  });

  it.each(['x', '[]', '["a","p","week",0]', '["a","p","hour","0"]', '["a","p","hour",0,7]'])(
    'refuses %s',
    (id) => {
      expect(parseUsageCellId(id)).toBeNull();
    },
  );
});
