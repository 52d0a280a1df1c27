import type { Policy, PolicySet, WindowSpec } from '@tally/policy';
import type { AuditEntry } from '@tally/projections';
import { describe, expect, it } from 'vitest';
import { EnforcementComparison } from './enforcement-diff';
import { comparedWindows, type ComparedWindow } from './enforcement-windows';
import { testPolicy } from '@tally/testing';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 30, 9, 30, 0);
const BUCKET = Math.floor(NOW / HOUR);

const hourly: WindowSpec = {
  name: 'hourly',
  role: 'sustained',
  algorithm: 'fixed_window',
  limit: 10,
  periodMs: HOUR,
};
const policy = (name: string, mode: Policy['mode']): Policy => testPolicy(name, { windows: [hourly], mode });
const SET: PolicySet = {
  version: 'v',
  loadedAt: 0,
  policies: [policy('p', 'enforce'), policy('shadow', 'shadow')],
};
const [P, SHADOW] = comparedWindows(SET, NOW).compared as [ComparedWindow, ComparedWindow];

const audit = (over: Partial<AuditEntry>): AuditEntry => ({
  id: 'e1',
  timeMs: NOW - 60_000,
  type: 'degraded',
  tenant: 'acme',
  count: 1,
  selectors: { tenant: 'acme', principal: 'a' },
  policySetVersion: 'v',
  ...over,
});

describe(EnforcementComparison.name, () => {
  it('finds nothing when every counter holds what the projection says', () => {
    const sut = new EnforcementComparison();
    sut.addCounter(P, 'acme', 'a', { b: String(BUCKET), c: '7' });
    sut.addProjected(P, 'acme', 'a', 7);

    expect(sut.differences(new Map())).toEqual([]);
    expect(sut.size).toBe(1);
  });

  it('reads a hash of an older bucket as zero, and a missing one as no counter', () => {
    // given a stale hash for a and no hash at all for b, both with projected usage
    const sut = new EnforcementComparison();
    sut.addCounter(P, 'acme', 'a', { b: String(BUCKET - 1), c: '9' });
    sut.addProjected(P, 'acme', 'a', 3);
    sut.addProjected(P, null, 'b', 2);

    const rows = sut.differences(new Map());

    expect(rows.map((r) => [r.tenant, r.key, r.projected, r.counter, r.difference, r.explained])).toEqual([
      [null, 'b', 2, null, 2, false],
      ['acme', 'a', 3, 0, 3, false],
    ]);
    expect(rows[1]).toMatchObject({
      bucket: '2026-11-30T09:00:00.000Z',
      granularity: 'hour',
      window: 'hourly',
    });
  });

  it('skips a hash already in a later bucket (the window moved on while reading)', () => {
    const sut = new EnforcementComparison();
    sut.addCounter(P, 'acme', 'a', { b: String(BUCKET + 1), c: '1' });

    expect(sut.differences(new Map())).toEqual([]);
    expect(sut.rolled).toBe(1);
  });

  it('explains a higher projection by degraded decisions of the key in the bucket', () => {
    const sut = new EnforcementComparison();
    sut.addCounter(P, 'acme', 'a', { b: String(BUCKET), c: '4' });
    sut.addProjected(P, 'acme', 'a', 6);
    sut.addCounter(P, 'acme', 'z', { b: String(BUCKET), c: '1' });
    sut.addProjected(P, 'acme', 'z', 2);
    expect(sut.tenantsToExplain()).toEqual(['acme']);

    const rows = sut.differences(
      new Map([
        [
          'acme',
          [
            audit({ count: 2 }),
            // before the bucket: does not explain this one
            audit({ id: 'e0', timeMs: BUCKET * HOUR - 1 }),
          ],
        ],
      ]),
    );

    expect(rows.map((r) => [r.key, r.degraded, r.wouldDeny, r.explained])).toEqual([
      ['a', 2, 0, true],
      ['z', 0, 0, false],
    ]);
  });

  it("explains a shadow policy's higher projection by its would-deny rows, not those of denied decisions", () => {
    const sut = new EnforcementComparison();
    sut.addProjected(SHADOW, 'acme', 'a', 5);
    sut.addProjected(P, 'acme', 'a', 5);
    sut.addCounter(P, 'acme', 'a', { b: String(BUCKET), c: '5' });
    const entries = [
      audit({ id: 'w1', type: 'would_deny', policy: 'shadow' }),
      audit({ id: 'd1', type: 'would_deny', policy: 'shadow' }),
      audit({ id: 'd1', type: 'denied', policy: 'p', count: 1 }),
    ];

    const rows = sut.differences(new Map([['acme', entries]]));

    expect(rows).toEqual([
      expect.objectContaining({ policy: 'shadow', key: 'a', counter: null, wouldDeny: 1, explained: true }),
    ]);
  });

  it('never explains a counter higher than the projection', () => {
    const sut = new EnforcementComparison();
    sut.addCounter(P, 'acme', 'a', { b: String(BUCKET), c: '8' });
    sut.addProjected(P, 'acme', 'a', 5);

    const rows = sut.differences(new Map([['acme', [audit({})]]]));

    expect(rows).toEqual([expect.objectContaining({ difference: -3, degraded: 0, explained: false })]);
  });
});
