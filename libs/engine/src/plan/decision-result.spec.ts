import type { Policy, WindowSpec } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { planDecision, type DecisionPlan } from './decision-plan';
import { backendDecision, scriptDecision } from './decision-result';
import { testPolicy } from '@tally/testing';

const windows: WindowSpec[] = [
  { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 10, periodMs: 1_000 },
  { name: 'sustained', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 60_000 },
];
function policy(name: string, over: Partial<Policy> = {}): Policy {
  return testPolicy(name, { windows, ...over });
}
function plan(...policies: Policy[]): DecisionPlan {
  const r = planDecision(
    { selectors: { principal: 'p' }, cost: 2 },
    {
      policySet: { version: 'v', policies, loadedAt: 0 },
      tokenSecret: 'secret-secret-secret',
      maxCost: 1_000_000,
      shards: 4,
      decisionId: 'ID',
    },
  );
  if (!r.ok) throw new Error(r.refusal.message);
  return r.plan;
}
const w = (remaining: number, resetMs: number, wouldDeny = false) => ({ remaining, resetMs, wouldDeny });

describe(scriptDecision.name, () => {
  it('maps an allow, binding the enforce window with the least left and flagging shadow would_deny', () => {
    const sut = scriptDecision(plan(policy('api'), policy('trial', { mode: 'shadow' })), {
      kind: 'allowed',
      nowMs: 1,
      retryAfterMs: 0,
      binding: 0,
      windows: [w(8, 200), w(40, 5_000), w(0, 900, true), w(3, 100)],
    });
    expect(sut).toMatchObject({
      allowed: true,
      kind: 'allowed',
      reason: null,
      code: null,
      replayed: false,
      degraded: false,
    });
    expect(sut.binding).toEqual({ policy: 'api', window: 'burst', limit: 10, remaining: 8, reset_ms: 200 });
    expect(sut.policies).toEqual([
      {
        name: 'api',
        mode: 'enforce',
        windows: [
          { name: 'burst', role: 'burst', limit: 10, remaining: 8, reset_ms: 200 },
          { name: 'sustained', role: 'sustained', limit: 100, remaining: 40, reset_ms: 5_000 },
        ],
      },
      {
        name: 'trial',
        mode: 'shadow',
        would_deny: true,
        windows: [
          { name: 'burst', role: 'burst', limit: 10, remaining: 0, reset_ms: 900 },
          { name: 'sustained', role: 'sustained', limit: 100, remaining: 3, reset_ms: 100 },
        ],
      },
    ]);
  });

  it('maps a denial to 429 with the binding window, its reason and the retry', () => {
    const sut = scriptDecision(plan(policy('api')), {
      kind: 'denied',
      nowMs: 1,
      retryAfterMs: 47_000,
      binding: 2,
      windows: [w(8, 200), w(1, 47_000, true)],
    });
    expect(sut).toMatchObject({
      allowed: false,
      kind: 'denied',
      reason: 'sustained_quota_exhausted',
      code: 'quota.exceeded',
      retry_after_ms: 47_000,
    });
    expect(sut.binding).toEqual({
      policy: 'api',
      window: 'sustained',
      limit: 100,
      remaining: 1,
      reset_ms: 47_000,
    });
  });

  it('maps a conflict to 409', () => {
    expect(scriptDecision(plan(policy('api')), { kind: 'conflict', nowMs: 1 })).toMatchObject({
      kind: 'conflict',
      code: 'idempotency.conflict',
      allowed: false,
    });
  });

  it('answers a replay with the stored decision id and policies', () => {
    const stored = JSON.stringify({
      v: 1,
      outcome: 'allowed',
      id: 'ORIGINAL',
      policies: [
        { name: 'old', mode: 'enforce', key: 'p', windows: [{ name: 'w', role: 'burst', limit: 5 }] },
      ],
    });
    const sut = scriptDecision(plan(policy('api')), {
      kind: 'replayed',
      nowMs: 1,
      storedPayload: stored,
      windows: [w(4, 10)],
    });
    expect(sut).toMatchObject({ decision_id: 'ORIGINAL', replayed: true, allowed: true, kind: 'allowed' });
    expect(sut.policies).toEqual([
      {
        name: 'old',
        mode: 'enforce',
        windows: [{ name: 'w', role: 'burst', limit: 5, remaining: 4, reset_ms: 10 }],
      },
    ]);
  });
});

describe(backendDecision.name, () => {
  it('degrades when every applicable policy is fail_open', () => {
    expect(backendDecision(plan(policy('api')), 'backend_timeout')).toMatchObject({
      allowed: true,
      degraded: true,
      degraded_cause: 'backend_timeout',
      kind: 'allowed',
      reason: null,
    });
  });

  it('refuses with 503 and the cause when any applicable policy is fail_closed', () => {
    const sut = backendDecision(
      plan(policy('api'), policy('strict', { onBackendFailure: 'fail_closed' })),
      'backend_unavailable',
    );
    expect(sut).toMatchObject({
      allowed: false,
      degraded: false,
      kind: 'unavailable',
      reason: 'backend_unavailable',
      code: 'backend.unavailable',
    });
    expect(sut.retry_after_ms).toBeGreaterThanOrEqual(1000);
  });
});
