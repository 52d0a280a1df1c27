import type { Policy, WindowSpec } from '@tally/policy';
import { testPolicy } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import { planDecision, type DecisionPlan } from '../plan/decision-plan';
import { LocalFallback, type LocalFallbackOutcome, type OverrideSource } from './local-fallback';
import type { HeldOverride } from '../overrides/override-copy';

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

function setup(maxKeys = 10, held: Record<string, HeldOverride> = {}, share = 1) {
  const seen: [string, LocalFallbackOutcome, number][] = [];
  // The copy, keyed by override field (`<policy>:<scope>:<key>`); the shard is the plan's.
  const overrides: OverrideSource = { lookup: (_shard, field) => held[field] };
  const sut = new LocalFallback(
    { share, maxKeys },
    () => T,
    { onLocalFallback: (policy, outcome, keys) => seen.push([policy, outcome, keys]) },
    overrides,
  );
  return { sut, seen };
}

const BLOCK: HeldOverride = { version: 9, expiresAtMs: null, limits: null };

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

  describe('with the overrides of this process’s copy', () => {
    it('refuses a blocked key with quota.blocked, degraded, under local_fallback and fail_open alike', () => {
      // given principal p blocked on both policies, q not
      const { sut, seen } = setup(10, { 'a:acme:p': BLOCK, 'open:acme:p': BLOCK });
      const both = [local('a'), testPolicy('open')];

      const local3 = [1, 2, 3].map(() => sut.decideFailed(plan([local('a')]), 'backend_unavailable'));
      const failOpen = sut.decideFailed(plan([testPolicy('open')]), 'backend_timeout');
      const other = sut.decideFailed(plan(both, 'q'), 'backend_unavailable');

      for (const d of [...local3, failOpen])
        expect(d).toMatchObject({
          allowed: false,
          kind: 'denied',
          reason: 'blocked',
          code: 'quota.blocked',
          degraded: true,
          // a block without expiry: a day, as the script says
          retry_after_ms: 86_400_000,
        });
      expect(local3[0]).toMatchObject({
        degraded_cause: 'backend_unavailable',
        binding: { policy: 'a', window: 'burst', limit: 0, remaining: 0 },
        policies: [{ name: 'a', override: { version: 9 }, windows: [{ limit: 0 }, { limit: 0 }] }],
      });
      expect(failOpen).toMatchObject({ degraded_cause: 'backend_timeout', binding: { policy: 'open' } });
      // nothing was counted for the blocked key; the other key is decided as ever
      expect(other).toMatchObject({ allowed: true, degraded: true });
      expect(sut.size).toBe(1);
      expect(seen.map(([, o]) => o)).toEqual(['blocked', 'blocked', 'blocked', 'allowed']);
    });

    it('a peek (cost 0) of a blocked key is not refused, as the script answers it', () => {
      const { sut } = setup(10, { 'open:acme:p': BLOCK });

      expect(sut.decideFailed(plan([testPolicy('open')], 'p', 0), 'backend_unavailable')).toMatchObject({
        allowed: true,
        degraded: true,
      });
    });

    it('a block with an expiry waits until it', () => {
      const { sut } = setup(10, { 'a:acme:p': { ...BLOCK, expiresAtMs: T + 5_000 } });

      expect(sut.decideFailed(plan([local('a')]), 'backend_unavailable')).toMatchObject({
        code: 'quota.blocked',
        retry_after_ms: 5_000,
      });
    });

    it('leaves fail_closed as it is: a blocked key gets the 503 of any failed step', () => {
      const { sut } = setup(10, { 'closed:acme:p': BLOCK });
      const closed = testPolicy('closed', { onBackendFailure: 'fail_closed' });

      expect(sut.decideFailed(plan([closed, local('a')]), 'backend_unavailable')).toMatchObject({
        allowed: false,
        kind: 'unavailable',
        code: 'backend.unavailable',
      });
    });

    it('counts against a share of the overridden limits: a raise raises the local share', () => {
      // given share 2 and the sustained window of principal p raised from 3 to 10 (burst stays 4)
      const held = { 'a:acme:p': { version: 4, expiresAtMs: null, limits: { sustained: 10 } } };
      const { sut } = setup(10, held, 2);
      const ask = (principal: string) =>
        sut.decideFailed(plan([local('a')], principal), 'backend_unavailable');

      // then p gets ⌊4 / 2⌋ = 2 (burst binds first), and its sustained window shows the raise
      const p = [1, 2, 3].map(() => ask('p'));
      expect(p.map((d) => d.allowed)).toEqual([true, true, false]);
      expect(p[0].policies[0]).toMatchObject({
        override: { version: 4 },
        windows: [
          { name: 'burst', limit: 4 },
          { name: 'sustained', limit: 10, remaining: 4 },
        ],
      });
      // and q, at the policy's 3: ⌊3 / 2⌋ = 1
      expect([1, 2].map(() => ask('q').allowed)).toEqual([true, false]);
    });
  });
});
