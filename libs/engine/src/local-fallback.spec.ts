import type { Policy, WindowSpec } from '@tally/policy';
import { testPolicy } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { planDecision, type DecisionPlan } from './decision-plan';
import { LocalFallback, type LocalFallbackOutcome } from './local-fallback';

const T = 1_700_000_040_000;
const windows: WindowSpec[] = [
  { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 4, periodMs: 1_000 },
  { name: 'sustained', role: 'sustained', algorithm: 'fixed_window', limit: 3, periodMs: 60_000 },
];
const local = (name: string, over: Partial<Policy> = {}) =>
  testPolicy(name, { windows, maxCost: 3, onBackendFailure: 'local_fallback', ...over });

function plan(policies: Policy[], principal = 'p', cost = 1): DecisionPlan {
  const r = planDecision(
    { selectors: { tenant: 'acme', principal }, cost },
    {
      policySet: { version: 'v', policies, loadedAt: 0 },
      tokenSecret: 'secret-secret-secret',
      maxCost: 1_000_000,
      shards: 4,
      decisionId: `ID-${principal}`,
    },
  );
  if (!r.ok) throw new Error(r.refusal.message);
  return r.plan;
}

function setup(maxKeys = 10) {
  const seen: [string, LocalFallbackOutcome, number][] = [];
  const sut = new LocalFallback({ share: 1, maxKeys }, () => T, {
    onLocalFallback: (policy, outcome, keys) => seen.push([policy, outcome, keys]),
  });
  return { sut, seen };
}

describe(LocalFallback.name, () => {
  it('applies when a local_fallback enforce policy applies and none is fail_closed', () => {
    const { sut } = setup();

    expect(sut.applies(plan([local('a'), testPolicy('open')]))).toBe(true);
    expect(sut.applies(plan([local('a'), testPolicy('closed', { onBackendFailure: 'fail_closed' })]))).toBe(
      false,
    );
    expect(sut.applies(plan([local('a', { mode: 'shadow' })]))).toBe(false);
    expect(sut.applies(plan([testPolicy('open')]))).toBe(false);
  });

  it('allows degraded up to the limit, then denies with the window’s reason, all degraded with the cause', () => {
    const { sut, seen } = setup();
    const policies = [local('a'), testPolicy('open')];

    const allowed = [1, 2, 3].map(() => sut.decide(plan(policies), 'backend_unavailable'));
    const denied = sut.decide(plan(policies), 'backend_unavailable');

    expect(allowed.map((d) => [d.allowed, d.kind, d.degraded, d.degraded_cause])).toEqual(
      Array(3).fill([true, 'allowed', true, 'backend_unavailable']),
    );
    expect(allowed[2].policies).toEqual([
      {
        name: 'a',
        mode: 'enforce',
        windows: [
          { name: 'burst', role: 'burst', limit: 4, remaining: 1, reset_ms: 750 },
          { name: 'sustained', role: 'sustained', limit: 3, remaining: 0, reset_ms: 60_000 },
        ],
      },
      // the fail_open policy counts nothing: unknown, at its full limit
      {
        name: 'open',
        mode: 'enforce',
        windows: [{ name: 'w', role: 'sustained', limit: 100, remaining: 100, reset_ms: 0 }],
      },
    ]);
    expect(allowed[2].binding).toMatchObject({ policy: 'a', window: 'sustained', remaining: 0 });
    expect(denied).toMatchObject({
      allowed: false,
      kind: 'denied',
      reason: 'sustained_quota_exhausted',
      code: 'quota.exceeded',
      retry_after_ms: 60_000,
      degraded: true,
      degraded_cause: 'backend_unavailable',
      binding: { policy: 'a', window: 'sustained', limit: 3, remaining: 0, reset_ms: 60_000 },
    });
    expect(seen.map(([p, o]) => `${p}:${o}`)).toEqual(['a:allowed', 'a:allowed', 'a:allowed', 'a:denied']);
    expect(seen.at(-1)?.[2]).toBe(1);
  });

  it('keeps keys apart: another principal has its own share', () => {
    const { sut } = setup();
    for (let i = 0; i < 3; i++) sut.decide(plan([local('a')], 'p'), 'backend_timeout');

    expect(sut.decide(plan([local('a')], 'q'), 'backend_timeout').allowed).toBe(true);
    expect(sut.size).toBe(2);
  });

  it('answers a key beyond the bound as its policy’s overflow says: fail_closed refuses with 503', () => {
    const { sut, seen } = setup(1);
    sut.decide(plan([local('a')], 'p'), 'backend_unavailable');

    const refused = sut.decide(plan([local('a')], 'q'), 'backend_unavailable');

    expect(refused).toMatchObject({
      allowed: false,
      kind: 'unavailable',
      reason: 'backend_unavailable',
      code: 'backend.unavailable',
      retry_after_ms: 1000,
      message: 'local fallback: the in-memory key bound is reached',
    });
    expect(seen.at(-1)).toEqual(['a', 'overflow_closed', 1]);
  });

  it('answers a key beyond the bound as its policy’s overflow says: fail_open allows uncounted', () => {
    const { sut, seen } = setup(1);
    const open = local('a', { localFallbackOverflow: 'fail_open' });
    sut.decide(plan([open], 'p'), 'backend_unavailable');

    const allowed = sut.decide(plan([open], 'q'), 'backend_unavailable');

    expect(allowed).toMatchObject({
      allowed: true,
      kind: 'allowed',
      degraded: true,
      degraded_cause: 'backend_unavailable',
    });
    expect(allowed.policies[0].windows.map((w) => w.remaining)).toEqual([4, 3]);
    expect(seen.at(-1)).toEqual(['a', 'overflow_open', 1]);
    expect(sut.size).toBe(1);
  });
});
