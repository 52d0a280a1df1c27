import type { Policy, PolicySet, WindowSpec } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { PolicySimulator } from './policy-simulator';
import type { RecordedDecision } from './recorded-decision';
import { testPolicy } from '@tally/testing';

const T0 = Date.UTC(2026, 10, 30, 9, 0, 0);

function policy(name: string, windows: WindowSpec[], over: Partial<Policy> = {}): Policy {
  const maxCost = Math.min(...windows.map((w) => w.limit));
  return testPolicy(name, { key: ['tenant'], windows, maxCost, onBackendFailure: 'fail_closed', ...over });
}
const fixed = (limit: number, periodMs = 60_000): WindowSpec => ({
  name: 'w',
  role: 'sustained',
  algorithm: 'fixed_window',
  limit,
  periodMs,
});
const set = (...policies: Policy[]): PolicySet => ({ version: 'v-test', policies, loadedAt: 0 });

let seq = 0;
function decision(over: Partial<RecordedDecision> = {}): RecordedDecision {
  seq++;
  return {
    id: `01J${String(seq).padStart(23, '0')}`,
    timeMs: T0 + seq,
    selectors: { tenant: 'acme' },
    attributes: {},
    cost: 1,
    count: 1,
    outcome: 'allowed',
    policies: [{ name: 'current', mode: 'enforce', wouldDeny: [false] }],
    ...over,
  };
}

describe(PolicySimulator.name, () => {
  it('counts what a tighter limit would deny against what happened', () => {
    // given 5 allowed decisions under the current policy, and a proposal limiting to 3 a minute
    const sut = new PolicySimulator(set(policy('proposed', [fixed(3)])));

    for (let i = 0; i < 5; i++) sut.add(decision());

    // then the last two would be denied
    expect(sut.report()).toEqual({
      decisions: 5,
      actual: { allowed: 5, denied: 0 },
      simulated: { allowed: 3, denied: 2 },
      changed: { allowedToDenied: 2, deniedToAllowed: 0 },
      policies: [
        {
          policy: 'proposed',
          proposed: true,
          recorded: false,
          actual: { applied: 0, allowed: 0, denied: 0 },
          simulated: { applied: 5, allowed: 3, denied: 2 },
        },
        {
          policy: 'current',
          proposed: false,
          recorded: true,
          actual: { applied: 5, allowed: 5, denied: 0 },
          simulated: { applied: 0, allowed: 0, denied: 0 },
        },
      ],
    });
  });

  it('simulates a gcra window: its burst at once, then one per emission interval', () => {
    // given 6 decisions 1 ms apart, and a proposal of 1 per second with a burst of 2
    const spaced: WindowSpec = { ...fixed(1, 1_000), algorithm: 'gcra', burst: 2 };
    const sut = new PolicySimulator(set(policy('proposed', [spaced], { maxCost: 2 })));

    for (let i = 0; i < 6; i++) sut.add(decision());

    // then the burst of 2 passes and the rest, all within the next second, would be denied
    expect(sut.report().simulated).toEqual({ allowed: 2, denied: 4 });
  });

  it('expands a coalesced denial into its count, allowing what the proposal affords', () => {
    // given one event standing for 10 denials in one second, and a proposal allowing 4
    const sut = new PolicySimulator(set(policy('current', [fixed(4)])));

    sut.add(
      decision({
        count: 10,
        outcome: 'denied',
        reason: 'sustained_quota_exhausted',
        policies: [{ name: 'current', mode: 'enforce', wouldDeny: [true] }],
      }),
    );

    const report = sut.report();
    expect(report.decisions).toBe(10);
    expect(report.actual).toEqual({ allowed: 0, denied: 10 });
    expect(report.simulated).toEqual({ allowed: 4, denied: 6 });
    expect(report.changed).toEqual({ allowedToDenied: 0, deniedToAllowed: 4 });
    expect(report.policies[0].actual).toEqual({ applied: 10, allowed: 0, denied: 10 });
  });

  it('never lets a shadow policy deny, but counts its would-denies, and a denial commits nothing', () => {
    const sut = new PolicySimulator(
      set(policy('enforced', [fixed(2)]), policy('trial', [fixed(1)], { mode: 'shadow' })),
    );

    for (let i = 0; i < 3; i++) sut.add(decision());

    const report = sut.report();
    expect(report.simulated).toEqual({ allowed: 2, denied: 1 });
    expect(report.policies.find((p) => p.policy === 'trial')?.simulated).toEqual({
      applied: 3,
      allowed: 1,
      denied: 2,
    });
  });

  it('refuses a request missing a key dim of an enforce policy, as the engine does', () => {
    const sut = new PolicySimulator(set(policy('by-principal', [fixed(5)], { key: ['principal'] })));

    sut.add(decision());

    expect(sut.report().simulated).toEqual({ allowed: 0, denied: 1 });
  });

  it('refuses a cost above the smallest limit (413 in the engine) and commits nothing', () => {
    const sut = new PolicySimulator(set(policy('small', [fixed(3)])));

    sut.add(decision({ cost: 4 }));
    sut.add(decision({ cost: 3 }));

    expect(sut.report().simulated).toEqual({ allowed: 1, denied: 1 });
  });

  it('keeps windows per tenant and resets them at the window boundary', () => {
    const sut = new PolicySimulator(set(policy('p', [fixed(1)])));

    sut.add(decision({ selectors: { tenant: 'a' } }));
    sut.add(decision({ selectors: { tenant: 'b' } }));
    sut.add(decision({ selectors: { tenant: 'a' } }));
    sut.add(decision({ selectors: { tenant: 'a' }, timeMs: T0 + 60_000 }));

    expect(sut.report().simulated).toEqual({ allowed: 3, denied: 1 });
  });

  it('applies proposed overrides as the engine does: a raise for its key only, a 0 blocks it', () => {
    // given a proposal of 2 a minute per tenant, a raise to 4 for acme and a block of evil
    const sut = new PolicySimulator(set(policy('p', [fixed(2)])), [
      { policy: 'p', key: 'acme', tenant: 'acme', limits: { w: 4 } },
      { policy: 'p', key: 'evil', tenant: 'evil', limits: { w: 0 } },
    ]);
    // when acme, other and evil each send 5
    for (const tenant of ['acme', 'other', 'evil'])
      for (let i = 0; i < 5; i++) sut.add(decision({ selectors: { tenant } }));
    // then acme gets 4, other 2, evil none
    expect(sut.report().simulated).toEqual({ allowed: 6, denied: 9 });
    expect(sut.report().policies[0].simulated).toEqual({ applied: 15, allowed: 6, denied: 9 });
  });
});
