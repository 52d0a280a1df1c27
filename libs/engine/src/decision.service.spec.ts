import type { Policy, PolicySet } from '@tally/policy';
import { testPolicy } from '@tally/testing';
import { describe, expect, it } from 'vitest';
import type { ScriptOutcome } from './decide.script';
import { DecisionService } from './decision.service';
import type { DecisionStore, PlanState, StepResult } from './decision-store';
import type { EngineOptions } from './engine.options';
import { localFallbackOf } from './failure/local-fallback';
import type { DecisionPlan } from './plan/decision-plan';
import type { BackendFailure } from './plan/decision.types';

/**
 * The use case against the `DecisionStore` port, no Redis: a store double that records what it was
 * asked and answers one fixed step. What Redis answers is tested under test/integration (engine*.test.ts).
 */
class FakeStore implements DecisionStore {
  readonly runs: number[] = [];
  constructor(private readonly step: StepResult<ScriptOutcome>) {}

  run(): Promise<StepResult<ScriptOutcome>> {
    this.runs.push(1);
    return Promise.resolve(this.step);
  }

  runMany(plans: readonly DecisionPlan[]): Promise<StepResult<ScriptOutcome>[]> {
    this.runs.push(plans.length);
    return Promise.resolve(plans.map(() => this.step));
  }

  peekWithState(): Promise<StepResult<PlanState>> {
    return Promise.reject(new Error('not used here'));
  }
}

const allowed: StepResult<ScriptOutcome> = {
  ok: true,
  value: {
    kind: 'allowed',
    nowMs: 1_000,
    retryAfterMs: 0,
    binding: 0,
    windows: [{ remaining: 99, resetMs: 60_000, wouldDeny: false }],
  },
};
const timedOut: StepResult<ScriptOutcome> = { ok: false, failure: 'backend_timeout' };

const options: EngineOptions = {
  redis: { mode: 'single', url: 'redis://unused' },
  shards: 4,
  backendTimeoutMs: 50,
  idempotencyTtlMs: 60_000,
  tokenSecret: 'unit-test-secret-0123456789',
  clock: () => 1_000,
};

function setup(step: StepResult<ScriptOutcome>, policy: Policy = testPolicy('api')) {
  const store = new FakeStore(step);
  const set: PolicySet = { version: 'v', policies: [policy], loadedAt: 0 };
  const owed: BackendFailure[] = [];
  let nudges = 0;
  const ledger = {
    record: (_: DecisionPlan, cause: BackendFailure) => owed.push(cause),
    nudge: () => nudges++,
  };
  return {
    store,
    owed,
    nudges: () => nudges,
    sut: (local = localFallbackOf(options)) =>
      new DecisionService(store, { current: set }, options, undefined, ledger, local),
  };
}

const request = { selectors: { tenant: 'acme', principal: 'p' }, cost: 1 };

describe(DecisionService.name, () => {
  it("answers the store's step and nudges the degraded ledger when the store answers", async () => {
    const { sut, nudges, owed } = setup(allowed);

    const decision = await sut().decide(request);

    expect(decision).toMatchObject({ allowed: true, degraded: false, policies: [{ name: 'api' }] });
    expect(nudges()).toBe(1);
    expect(owed).toEqual([]);
  });

  it('owes a decision allowed under fail_open while the store failed to the degraded ledger', async () => {
    const { sut, owed } = setup(timedOut);

    const decision = await sut().decide(request);

    expect(decision).toMatchObject({ allowed: true, degraded: true, degraded_cause: 'backend_timeout' });
    expect(owed).toEqual(['backend_timeout']);
  });

  it('answers a failed step with the local fallback it was given (a block in its override copy)', async () => {
    // given a fallback whose override copy blocks every key of the policy
    const blocked = localFallbackOf(options, undefined, {
      lookup: () => ({ version: 1, expiresAtMs: null, limits: null }),
    });
    const { sut, owed } = setup(timedOut);

    // when the store fails
    const decision = await sut(blocked).decide(request);

    // then the block refuses, degraded, and nothing is owed (nothing was spent)
    expect(decision).toMatchObject({ allowed: false, degraded: true, code: 'quota.blocked' });
    expect(owed).toEqual([]);
  });

  it('runs a batch of one as one step and a larger batch as one runMany', async () => {
    const { sut, store } = setup(allowed);
    const service = sut();

    await service.decideBatch([request]);
    await service.decideBatch([request, request, request]);

    expect(store.runs).toEqual([1, 3]);
  });
});
