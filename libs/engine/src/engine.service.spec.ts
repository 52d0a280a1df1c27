import { afterEach, describe, expect, it } from 'vitest';
import type { RedisClient } from '@tally/redis';
import { planDecision, type DecisionPlan } from './decision-plan';
import type { BackendFailure } from './decision.types';
import { EngineService } from './engine.service';

/**
 * The breaker accounting of EngineService around a stand-in client whose decide command answers as
 * each test says (in time, late, never, or with a lost connection). Real Redis behaviour is covered
 * by test/integration/engine-failure.test.ts; this pins down which failures count as an outage.
 */
type Answer = 'never' | 'lost' | { afterMs: number };

function fakeRedis(answer: () => Answer): RedisClient {
  const reply = [1, 0, 0, 0, ''];
  const client = {
    status: 'ready',
    on: () => client,
    defineCommand: () => undefined,
    tallyDecide: () => {
      const a = answer();
      if (a === 'never') return new Promise(() => undefined);
      if (a === 'lost') return Promise.reject(new Error('Connection is closed.'));
      return new Promise((resolve) => setTimeout(() => resolve(reply), a.afterMs));
    },
  };
  return client as unknown as RedisClient;
}

const plan: DecisionPlan = (() => {
  const planned = planDecision(
    { selectors: {}, cost: 1 },
    {
      policySet: { version: 'v', policies: [], loadedAt: 0 },
      tokenSecret: 'unit-test-secret-0123456789',
      shards: 4,
      maxCost: 1_000_000,
      decisionId: '01JDTESTDECISION0000000000',
    },
  );
  if (!planned.ok) throw new Error(planned.refusal.message);
  return planned.plan;
})();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const DEADLINE_MS = 20;

describe(EngineService.name, () => {
  let answer: Answer = { afterMs: 0 };
  let sut: EngineService;
  const failures: BackendFailure[] = [];

  function setup(): void {
    failures.length = 0;
    sut = new EngineService(
      fakeRedis(() => answer),
      {
        redis: { mode: 'single', url: 'redis://unused' },
        shards: 4,
        backendTimeoutMs: DEADLINE_MS,
        idempotencyTtlMs: 1000,
        tokenSecret: 'unit-test-secret-0123456789',
        breaker: { failureThreshold: 2, cooldownMs: 10_000 },
      },
      { onBackendError: (f) => failures.push(f) },
    );
  }

  afterEach(() => {
    answer = { afterMs: 0 };
  });

  it('opens the breaker when timed-out steps are never answered (a hung Redis)', async () => {
    setup();
    answer = 'never';

    const steps = await Promise.all([sut.run(plan), sut.run(plan)]);

    expect(steps.map((s) => (s.ok ? 'ok' : s.failure))).toEqual(['backend_timeout', 'backend_timeout']);
    // judged one deadline later: silence all along counts
    await sleep(DEADLINE_MS * 3);
    expect(sut.health().breaker).toBe('open');
    expect((await sut.run(plan)).ok).toBe(false);
    expect(failures.at(-1)).toBe('backend_unavailable');
  });

  it('keeps the breaker closed when Redis answers late (a slow Redis or a starved machine)', async () => {
    setup();
    answer = { afterMs: DEADLINE_MS * 2 };

    const steps = await Promise.all([sut.run(plan), sut.run(plan), sut.run(plan)]);

    expect(steps.every((s) => !s.ok && s.failure === 'backend_timeout')).toBe(true);
    await sleep(DEADLINE_MS * 4);
    expect(sut.health().breaker).toBe('closed');
    answer = { afterMs: 0 };
    expect((await sut.run(plan)).ok).toBe(true);
  });

  it('counts a lost connection at once', async () => {
    setup();
    answer = 'lost';

    await sut.run(plan);
    await sut.run(plan);

    expect(failures).toEqual(['backend_unavailable', 'backend_unavailable']);
    expect(sut.health().breaker).toBe('open');
  });
});
