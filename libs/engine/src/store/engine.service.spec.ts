import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RedisClient } from '@tally/redis';
import { planDecision, type DecisionPlan } from '../plan/decision-plan';
import type { BackendFailure } from '../plan/decision.types';
import { EngineService } from './engine.service';

/**
 * The breaker accounting of EngineService around a stand-in client whose decide command answers as
 * each test says (in time, late, never, or with a lost connection). Real Redis behaviour is covered
 * by test/integration/engine-failure.test.ts; this pins down which failures count as an outage.
 */
type Answer = 'never' | 'lost' | { afterMs: number };

function fakeRedis(answer: () => Answer): RedisClient {
  const reply = [1, 0, 0, 0, '', 0, 0, 0]; // allowed, no windows (decide-layout.ts)
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

  // Fake clocks: deadlines, late replies and the breaker's judgement one deadline later happen in
  // the order the test sets, however busy the machine (real 20 ms timers raced the scheduler).
  // setImmediate stays real: withDeadline's last turn of the event loop must still run.
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ['setTimeout', 'clearTimeout', 'performance'],
    });
  });

  afterEach(() => {
    vi.useRealTimers();
    answer = { afterMs: 0 };
  });

  /** Runs the steps, moving the fake clock past their deadline. */
  async function runAll(n: number): Promise<Awaited<ReturnType<EngineService['run']>>[]> {
    const steps = Promise.all(Array.from({ length: n }, () => sut.run(plan)));
    await vi.advanceTimersByTimeAsync(DEADLINE_MS);
    return steps;
  }

  it('opens the breaker when timed-out steps are never answered (a hung Redis)', async () => {
    setup();
    answer = 'never';

    const steps = await runAll(2);

    expect(steps.map((s) => (s.ok ? 'ok' : s.failure))).toEqual(['backend_timeout', 'backend_timeout']);
    expect(sut.health().breaker).toBe('closed');
    // judged one deadline later: silence all along counts
    await vi.advanceTimersByTimeAsync(DEADLINE_MS * 2);
    expect(sut.health().breaker).toBe('open');
    expect((await sut.run(plan)).ok).toBe(false);
    expect(failures.at(-1)).toBe('backend_unavailable');
  });

  it('keeps the breaker closed when Redis answers late (a slow Redis or a starved machine)', async () => {
    setup();
    answer = { afterMs: DEADLINE_MS * 2 };

    const steps = await runAll(3);

    expect(steps.every((s) => !s.ok && s.failure === 'backend_timeout')).toBe(true);
    // past the late replies and the judgement one deadline later
    await vi.advanceTimersByTimeAsync(DEADLINE_MS * 3);
    expect(sut.health().breaker).toBe('closed');
    answer = { afterMs: 0 };
    expect((await runAll(1))[0].ok).toBe(true);
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
