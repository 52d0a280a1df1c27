import type { Policy, PolicySet, WindowSpec } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { comparedWindows } from './enforcement-windows';
import { testPolicy } from '@tally/testing';

const HOUR = 3_600_000;
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 30, 9, 30, 0);

const win = (name: string, algorithm: WindowSpec['algorithm'], periodMs: number): WindowSpec => ({
  name,
  role: 'sustained',
  algorithm,
  limit: 100,
  periodMs,
});
const policy = (name: string, windows: WindowSpec[], over: Partial<Policy> = {}): Policy =>
  testPolicy(name, { windows, maxCost: 100, onBackendFailure: 'fail_closed', ...over });
const SET: PolicySet = {
  version: 'v',
  loadedAt: 0,
  policies: [
    policy('p', [
      win('burst', 'token_bucket', 1000),
      win('minute', 'fixed_window', 60_000),
      win('hourly', 'fixed_window', HOUR),
      win('two-hours', 'fixed_window', 2 * HOUR),
      win('daily', 'sliding_window', DAY),
      win('monthly', 'calendar_month', 31 * DAY),
      { ...win('spaced', 'gcra', DAY), burst: 10 },
    ]),
    policy('off', [win('hourly', 'fixed_window', HOUR)], { enabled: false }),
  ],
};

describe(comparedWindows.name, () => {
  it('compares the 1h, 1d and calendar month windows with the projection bucket of their current bucket', () => {
    const sut = comparedWindows(SET, NOW);

    expect(
      sut.compared.map((w) => [
        w.window.name,
        w.code,
        w.granularity,
        new Date(w.bucketStartMs).toISOString(),
        new Date(w.bucketEndMs).toISOString(),
      ]),
    ).toEqual([
      ['hourly', 'f', 'hour', '2026-11-30T09:00:00.000Z', '2026-11-30T10:00:00.000Z'],
      ['daily', 's', 'day', '2026-11-30T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
      ['monthly', 'c', 'month', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ]);
  });

  it('says why every other window is not compared', () => {
    const sut = comparedWindows(SET, NOW);

    expect(sut.skipped).toEqual([
      { policy: 'p', window: 'burst', reason: 'token bucket (a level, not a sum of usage)' },
      {
        policy: 'p',
        window: 'minute',
        reason: 'fixed_window of 1m has no projection bucket (only 1h, 1d, calendar month)',
      },
      {
        policy: 'p',
        window: 'two-hours',
        reason: 'fixed_window of 2h has no projection bucket (only 1h, 1d, calendar month)',
      },
      {
        policy: 'p',
        window: 'spaced',
        reason: 'gcra (a level: its theoretical arrival time, not a sum per bucket)',
      },
      { policy: 'off', window: 'hourly', reason: 'policy disabled (counts nothing)' },
    ]);
  });

  it('keeps to one policy when asked', () => {
    const sut = comparedWindows(SET, NOW, 'off');

    expect(sut.compared).toEqual([]);
    expect(sut.skipped.map((s) => s.policy)).toEqual(['off']);
  });
});
