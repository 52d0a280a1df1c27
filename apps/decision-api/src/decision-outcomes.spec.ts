import type { Decision, DecisionPolicy } from '@tally/engine';
import { describe, expect, it } from 'vitest';
import { decisionLabels, policyOutcome } from './decision-outcomes';

const window = { name: 'w', role: 'burst' as const, limit: 10, remaining: 0, reset_ms: 1000 };
const enforce = (name: string): DecisionPolicy => ({ name, mode: 'enforce', windows: [window] });
const shadow = (name: string, wouldDeny: boolean): DecisionPolicy => ({
  name,
  mode: 'shadow',
  would_deny: wouldDeny,
  windows: [window],
});
const POLICIES = [enforce('a'), enforce('b'), shadow('s', true), shadow('t', false)];

const base: Decision = {
  allowed: true,
  decision_id: '01JD0000000000000000000000',
  reason: null,
  code: null,
  retry_after_ms: 0,
  degraded: false,
  replayed: false,
  policies: POLICIES,
  kind: 'allowed',
  binding: null,
};
const binding = (policy: string) => ({ policy, window: 'w', limit: 10, remaining: 0, reset_ms: 1000 });
const deniedBy = (policy: string): Partial<Decision> => ({
  allowed: false,
  reason: 'burst_quota_exhausted',
  code: 'quota.exceeded',
  kind: 'denied',
  binding: binding(policy),
});

/** Each row: a decision, its labels, and what each of a, b (enforce), s, t (shadow; s would deny) said. */
const CASES: { case: string; decision: Partial<Decision>; labels: object; policies: string[] }[] = [
  {
    case: 'allowed',
    decision: {},
    labels: { outcome: 'allowed', reason: '' },
    policies: ['allowed', 'allowed', 'would_deny', 'allowed'],
  },
  {
    case: 'denied by b: a did not deny, no shadow policy ever denies',
    decision: deniedBy('b'),
    labels: { outcome: 'denied', reason: 'burst_quota_exhausted' },
    policies: ['denied_by_other', 'denied', 'would_deny', 'allowed'],
  },
  {
    case: 'allowed under fail_open while Redis failed',
    decision: { degraded: true, degraded_cause: 'backend_timeout' },
    labels: { outcome: 'degraded', reason: 'backend_timeout' },
    policies: ['degraded', 'degraded', 'degraded', 'degraded'],
  },
  {
    case: 'denied by the local fallback of a while Redis failed',
    decision: { ...deniedBy('a'), degraded: true, degraded_cause: 'backend_unavailable' },
    labels: { outcome: 'denied', reason: 'burst_quota_exhausted' },
    policies: ['denied', 'denied_by_other', 'degraded', 'degraded'],
  },
  {
    case: 'refused under fail_closed',
    decision: {
      allowed: false,
      reason: 'backend_unavailable',
      code: 'backend.unavailable',
      kind: 'unavailable',
    },
    labels: { outcome: 'refused', reason: 'backend_unavailable' },
    policies: ['refused', 'refused', 'refused', 'refused'],
  },
  {
    case: 'a replay',
    decision: { replayed: true },
    labels: { outcome: 'replayed', reason: '' },
    policies: ['replayed', 'replayed', 'replayed', 'replayed'],
  },
];

describe(decisionLabels.name, () => {
  it.each(CASES)('$case: one decision, its policies apart', ({ decision, labels, policies }) => {
    const sut: Decision = { ...base, ...decision };

    expect(decisionLabels(sut)).toEqual(labels);
    expect(sut.policies.map((p) => policyOutcome(sut, p))).toEqual(policies);
  });

  it('labels an allowed decision no policy applied to (or its replay) unmatched, a refusal by its code', () => {
    const unmatched = { ...base, policies: [] };

    expect(decisionLabels(unmatched)).toEqual({ outcome: 'allowed', reason: 'unmatched' });
    expect(decisionLabels({ ...unmatched, replayed: true })).toEqual({
      outcome: 'replayed',
      reason: 'unmatched',
    });
    expect(decisionLabels({ ...unmatched, degraded: true, degraded_cause: 'backend_error' })).toEqual({
      outcome: 'degraded',
      reason: 'backend_error',
    });
    expect(
      decisionLabels({ ...unmatched, allowed: false, code: 'cost.too_large', kind: 'too_large' }),
    ).toEqual({ outcome: 'refused', reason: 'cost.too_large' });
  });
});
