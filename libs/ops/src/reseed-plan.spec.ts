import { encodeScope, policyStateKey, shardKeys, shardOf } from '@tally/engine';
import type { UsageEventV1 } from '@tally/events';
import type { Policy, PolicySet, WindowSpec } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { ReseedAccumulator, sustainedWindows } from './reseed-plan';
import { testPolicy } from '@tally/testing';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 30, 9, 30, 0);
const SHARDS = 64;

const win = (
  name: string,
  algorithm: WindowSpec['algorithm'],
  limit: number,
  periodMs: number,
): WindowSpec => ({
  name,
  role: 'sustained',
  algorithm,
  limit,
  periodMs,
});
function policy(name: string, windows: WindowSpec[], over: Partial<Policy> = {}): Policy {
  return testPolicy(name, { windows, maxCost: 100, onBackendFailure: 'fail_closed', ...over });
}
const SET: PolicySet = {
  version: 'v',
  loadedAt: 0,
  policies: [
    policy('p', [
      win('burst', 'token_bucket', 10, 1000),
      win('minute', 'fixed_window', 100, 60_000),
      win('hourly', 'fixed_window', 100, HOUR),
      win('sliding', 'sliding_window', 100, HOUR),
      win('monthly', 'calendar_month', 1000, 31 * 86_400_000),
      // T = 86.4 s; its burst comes back in 50 T = 1.2 h: rebuilt from the last 2.4 h
      { ...win('spaced', 'gcra', 1000, 86_400_000), burst: 50 },
    ]),
    policy('off', [win('hourly', 'fixed_window', 1, HOUR)], { enabled: false }),
  ],
};

let seq = 0;
function usage(timeMs: number, cost: number, over: Partial<UsageEventV1['data']> = {}): UsageEventV1 {
  seq++;
  return {
    specversion: '1.0',
    id: `01J${String(seq).padStart(23, '0')}`,
    source: 'tally/decision-api',
    type: 'tally.usage.v1',
    datacontenttype: 'application/json',
    time: new Date(timeMs).toISOString(),
    data: {
      policy_set_version: 'v',
      tenant: 'acme',
      selectors: { tenant: 'acme', principal: 'svc:1' },
      attributes: {},
      cost,
      outcome: 'allowed',
      policies: [{ name: 'p', mode: 'enforce', key: 'svc%3A1', windows: [] }],
      ...over,
    },
  };
}

const key = () => policyStateKey(shardKeys(shardOf('acme', SHARDS)), encodeScope('acme'), 'p', 'svc%3A1');

describe(sustainedWindows.name, () => {
  it('keeps fixed and sliding windows of an hour or more and calendar months of enabled policies', () => {
    const sut = sustainedWindows(SET, NOW).map((w) => [w.window.name, w.code, w.bucket, w.sinceMs]);

    expect(sut).toEqual([
      ['hourly', 'f', Math.floor(NOW / HOUR), Date.UTC(2026, 10, 30, 9)],
      ['sliding', 's', Math.floor(NOW / HOUR), Date.UTC(2026, 10, 30, 8)],
      ['monthly', 'c', 2026 * 12 + 10, Date.UTC(2026, 10, 1)],
      ['spaced', 'g', undefined, NOW - 2 * 4_320_000],
    ]);
  });
});

describe(ReseedAccumulator.name, () => {
  it('sums cost per window key and bucket as the engine counted it, keyed with the current policy', () => {
    const sut = new ReseedAccumulator(sustainedWindows(SET, NOW), SHARDS, Date.UTC(2026, 10, 1));

    sut.add(usage(Date.UTC(2026, 10, 30, 9, 5), 3));
    sut.add(usage(Date.UTC(2026, 10, 30, 8, 55), 2)); // previous hour: sliding `p` and month only
    sut.add(usage(Date.UTC(2026, 10, 2), 7)); // earlier this month: month only

    const targets = sut.targets().map((t) => [t.key, t.window, t.code, t.count, t.previous]);
    expect(targets).toEqual([
      [key(), 'hourly', 'f', 3, 0],
      [key(), 'monthly', 'c', 12, 0],
      [key(), 'sliding', 's', 3, 2],
      [key(), 'spaced', 'g', 0, 0],
    ]);
    // gcra: the TAT the two recent events make, in time order: 2 units at 8:55, then 3 at 9:05
    const tat = Date.UTC(2026, 10, 30, 9, 5) + 3 * 86_400;
    expect(sut.targets().find((t) => t.window === 'spaced')).toMatchObject({ bucket: tat, count: 0 });
  });

  it('skips degraded usage, duplicates, and shadow policies whose windows would have denied', () => {
    const set: PolicySet = {
      ...SET,
      policies: [policy('s', [win('hourly', 'fixed_window', 5, HOUR)], { mode: 'shadow' })],
    };
    const sut = new ReseedAccumulator(sustainedWindows(set, NOW), SHARDS, 0);
    const shadow = (wouldDeny: boolean) => ({
      policies: [
        {
          name: 's',
          mode: 'shadow' as const,
          key: 'svc%3A1',
          windows: [{ name: 'hourly', role: 'sustained' as const, limit: 5, would_deny: wouldDeny }],
        },
      ],
    });
    const twice = usage(NOW - 1000, 1, shadow(false));

    sut.add(twice);
    sut.add(twice);
    sut.add(usage(NOW - 1000, 4, shadow(true)));
    sut.add(usage(NOW - 1000, 2, { ...shadow(false), outcome: 'degraded' }));

    expect(sut.targets().map((t) => t.count)).toEqual([1]);
    expect(sut.counted).toBe(1);
  });
});
