import {
  DEGRADED_RESULTS,
  decisionEventFromOutbox,
  parseDecisionEvent,
  parseUsageEvent,
  usageEventFromOutbox,
  type OutboxEntry,
} from '@tally/events';
import type { Policy, PolicySet } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { planDecision, type DecisionPlan } from '../plan/decision-plan';
import { degradedEntry, type DegradedEntry } from './degraded-entry';
import { testPolicy } from '@tally/testing';

const DECISION_ID = '01JDTESTDEGRADED0000000000';
const TIME_MS = Date.UTC(2026, 10, 30, 9, 15, 0, 123);

const policy: Policy = testPolicy('api', {
  windows: [
    { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 10, periodMs: 1_000 },
    { name: 'sustained', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 60_000 },
  ],
});

function plan(cost = 3): DecisionPlan {
  const policySet: PolicySet = { version: 'v-test', policies: [policy], loadedAt: 0 };
  const r = planDecision(
    {
      selectors: { tenant: 'acme', principal: 'svc-42', token: 'secret-token' },
      attributes: { principal_class: 'machine' },
      cost,
      idempotency_key: 'b-77',
    },
    {
      policySet,
      tokenSecret: 'unit-test-secret-0123456789',
      shards: 64,
      maxCost: 1_000_000,
      decisionId: DECISION_ID,
    },
  );
  if (!r.ok) throw new Error(r.refusal.message);
  return r.plan;
}

/** The stream entry the ledger XADDs for `entry`. */
const streamEntry = (entry: DegradedEntry): OutboxEntry => ({
  p: entry.payload,
  t: String(entry.timeMs),
  r: DEGRADED_RESULTS,
});

describe(degradedEntry.name, () => {
  it('carries the allowed payload of the plan with outcome degraded and the cause', () => {
    const p = plan();
    const sut = degradedEntry(p, 'backend_timeout', TIME_MS);
    expect(sut).toMatchObject({
      decisionId: DECISION_ID,
      shard: 47,
      outbox: 'tally:v1:{s47}:outbox',
      marker: `tally:v1:{s47}:degraded:${DECISION_ID}`,
      timeMs: TIME_MS,
    });
    expect(JSON.parse(sut.payload)).toEqual({
      ...(JSON.parse(p.payloadJson) as object),
      outcome: 'degraded',
      degraded_cause: 'backend_timeout',
    });
    // the token selector is the HMAC the plan computed, never the raw token
    expect(sut.payload).not.toContain('secret-token');
  });

  it('becomes a usage event billing sees, with the local time and the windows static facts', () => {
    const sut = usageEventFromOutbox(streamEntry(degradedEntry(plan(), 'backend_unavailable', TIME_MS)));
    expect(sut).not.toBeNull();
    expect(sut).toMatchObject({
      id: DECISION_ID,
      type: 'tally.usage.v1',
      time: '2026-11-30T09:15:00.123Z',
      subject: 'api/svc-42',
      data: {
        tenant: 'acme',
        cost: 3,
        outcome: 'degraded',
        degraded_cause: 'backend_unavailable',
        idempotency_key: 'b-77',
        attributes: { principal_class: 'machine' },
      },
    });
    expect(sut?.data.policies[0].windows).toEqual([
      { name: 'burst', role: 'burst', limit: 10 },
      { name: 'sustained', role: 'sustained', limit: 100 },
    ]);
    expect(parseUsageEvent(JSON.stringify(sut))).toMatchObject({ ok: true });
  });

  it('becomes a decision event with outcome degraded, its cause and no deny reason', () => {
    const sut = decisionEventFromOutbox(streamEntry(degradedEntry(plan(), 'backend_error', TIME_MS)));
    expect(sut).toMatchObject({
      id: DECISION_ID,
      type: 'tally.decision.v1',
      data: { outcome: 'degraded', degraded_cause: 'backend_error', count: 1, cost: 3 },
    });
    expect(sut.data.reason).toBeUndefined();
    expect(parseDecisionEvent(JSON.stringify(sut))).toMatchObject({ ok: true });
  });

  it('refuses a plan whose payload is not the allowed one it knows how to rewrite', () => {
    const p = { ...plan(), payloadJson: '{"v":2}' };
    expect(() => degradedEntry(p, 'backend_timeout', TIME_MS)).toThrow(/prefix/);
  });
});
