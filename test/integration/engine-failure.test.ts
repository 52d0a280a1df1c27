/**
 * Backend failure with a REAL Redis process that this file starts on a free port, pauses (SIGSTOP),
 * stops and restarts, by its own pid: deadlines, fail_open / fail_closed, the circuit breaker, and
 * recovery after a restart (the script is gone from the new server: EVALSHA falls back to EVAL).
 */
import {
  DecisionService,
  EngineService,
  type BreakerState,
  type DecisionObserver,
  type EngineOptions,
} from '@tally/engine';
import type { PolicySet } from '@tally/policy';
import { createRedisClient } from '@tally/redis';
import { eventually, PrivateRedis, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';

/** Reconnects, breaker cooldowns and probes all happen within a few hundred milliseconds. */
const POLL = { timeoutMs: 10_000, intervalMs: 50 } as const;

describe(`${DecisionService.name} when Redis fails`, () => {
  let server: PrivateRedis;
  let engine: EngineService;
  let sut: DecisionService;
  const breakerStates: BreakerState[] = [];
  const backendErrors: string[] = [];
  const open = uniqueName('open');
  const closed = uniqueName('closed');
  const tenant = uniqueName('t');
  const ask = (route: string) => sut.decide({ selectors: { tenant, principal: 'p', route }, cost: 1 });

  beforeAll(async () => {
    server = await PrivateRedis.start();
    const options: EngineOptions = {
      redis: { mode: 'single', url: server.url },
      shards: 16,
      backendTimeoutMs: 150,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'engine-failure-secret-0123',
      breaker: { failureThreshold: 3, cooldownMs: 300 },
    };
    const observer: DecisionObserver = {
      onBreaker: (s) => breakerStates.push(s),
      onBackendError: (r) => backendErrors.push(r),
    };
    const set: PolicySet = {
      version: 'f',
      policies: [backendFailurePolicy(open, 'fail_open'), backendFailurePolicy(closed, 'fail_closed')],
      loadedAt: 0,
    };
    engine = new EngineService(createRedisClient(options.redis, 'hot-path'), options, observer);
    await engine.onModuleInit();
    sut = new DecisionService(engine, { current: set }, options, observer);
  });

  afterAll(async () => {
    await engine.onModuleDestroy();
    await server?.stop();
  });

  it('decides normally while Redis answers', async () => {
    expect(await ask(open)).toMatchObject({
      allowed: true,
      degraded: false,
      policies: [{ windows: [{ remaining: 999 }] }],
    });
    expect(engine.health().status).toBe('healthy');
  });

  it('times out a hung Redis: fail_open degrades, fail_closed refuses; the late command may still commit', async () => {
    // given a Redis that accepts connections but does not answer
    server.pause();
    try {
      const [degraded, refused] = [await ask(open), await ask(closed)];
      expect(degraded).toMatchObject({
        allowed: true,
        degraded: true,
        degraded_cause: 'backend_timeout',
        kind: 'allowed',
      });
      expect(refused).toMatchObject({
        allowed: false,
        kind: 'unavailable',
        reason: 'backend_timeout',
        code: 'backend.timeout',
      });
      expect(refused.retry_after_ms).toBeGreaterThanOrEqual(1_000);
    } finally {
      server.resume();
    }
    // then, once Redis resumes, the timed-out scripts run: the degraded decision WAS counted (ADR 0001)
    await eventually(
      async () => {
        const d = await sut.decide({ selectors: { tenant, principal: 'p', route: open }, cost: 0 });
        return !d.degraded && d.policies[0].windows[0].remaining === 998;
      },
      (ok) => ok,
      POLL,
    );
    expect(engine.health().breaker).toBe('closed');
  });

  it('stopped Redis: unavailable, the breaker opens and fails fast, then recovers after a restart', async () => {
    await eventually(
      async () => !(await ask(open)).degraded,
      (ok) => ok,
      POLL,
    );
    breakerStates.length = 0;
    backendErrors.length = 0;
    // given the Redis process is gone
    await server.stop();
    await eventually(
      () => engine.health().connection !== 'ready',
      (ok) => ok,
      POLL,
    );

    const degraded = await ask(open);
    const refused = await ask(closed);
    expect(degraded).toMatchObject({ allowed: true, degraded: true, degraded_cause: 'backend_unavailable' });
    expect(refused).toMatchObject({
      allowed: false,
      kind: 'unavailable',
      reason: 'backend_unavailable',
      code: 'backend.unavailable',
    });
    await ask(open);
    // three consecutive failures opened the breaker: the next call does not even try
    expect(breakerStates).toEqual(['open']);
    expect(engine.health()).toMatchObject({ status: 'unavailable', breaker: 'open' });
    const started = performance.now();
    expect(await ask(closed)).toMatchObject({ kind: 'unavailable', reason: 'backend_unavailable' });
    expect(performance.now() - started).toBeLessThan(50);
    expect(new Set(backendErrors)).toEqual(new Set(['backend_unavailable']));

    // when Redis comes back (empty, without the script)
    await server.restart();
    // then a probe after the cooldown closes the breaker and decisions are exact again
    await eventually(
      async () => (await ask(closed)).kind === 'allowed',
      (ok) => ok,
      POLL,
    );
    expect(breakerStates).toContain('half_open');
    expect(breakerStates.at(-1)).toBe('closed');
    expect(await ask(open)).toMatchObject({
      allowed: true,
      degraded: false,
      policies: [{ windows: [{ remaining: 999 }] }],
    });
    expect(engine.health().status).toBe('healthy');
  });
});
