/**
 * Backend failure with a REAL Redis process that this file starts on a spare port, pauses (SIGSTOP),
 * stops and restarts, by its own pid: deadlines, fail_open / fail_closed, the circuit breaker, and
 * recovery after a restart (the script is gone from the new server: EVALSHA falls back to EVAL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DecisionService,
  EngineService,
  createRedis,
  type BreakerState,
  type DecisionObserver,
  type EngineOptions,
} from '@tally/engine';
import type { Policy, PolicySet } from '@tally/policy';
import { uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PORT = 6390;
const URL_ = `redis://127.0.0.1:${PORT}`;
const dir = mkdtempSync(join(tmpdir(), 'tally-engine-failure-'));

function startRedis(): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(PORT), '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: 'ignore' },
  );
  return waitFor(async () => {
    const probe = new Redis(URL_, {
      lazyConnect: true,
      retryStrategy: () => null,
      enableOfflineQueue: false,
    });
    try {
      probe.on('error', () => undefined);
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  }).then(() => child);
}

function stopRedis(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function waitFor(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function policy(name: string, onBackendFailure: Policy['onBackendFailure']): Policy {
  return {
    name,
    match: { route: [name] },
    unless: {},
    key: ['principal'],
    windows: [{ name: 'w', role: 'sustained', algorithm: 'fixed_window', limit: 1_000, periodMs: 3_600_000 }],
    maxCost: 10,
    onBackendFailure,
    mode: 'enforce',
    enabled: true,
  };
}

describe(`${DecisionService.name} when Redis fails`, () => {
  let server: ChildProcess;
  let engine: EngineService;
  let sut: DecisionService;
  const breakerStates: BreakerState[] = [];
  const backendErrors: string[] = [];
  const open = uniqueName('open');
  const closed = uniqueName('closed');
  const tenant = uniqueName('t');
  const ask = (route: string) => sut.decide({ selectors: { tenant, principal: 'p', route }, cost: 1 });

  beforeAll(async () => {
    server = await startRedis();
    const options: EngineOptions = {
      redis: { mode: 'single', url: URL_ },
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
      policies: [policy(open, 'fail_open'), policy(closed, 'fail_closed')],
      loadedAt: 0,
    };
    engine = new EngineService(createRedis(options.redis), options, observer);
    await engine.onModuleInit();
    sut = new DecisionService(engine, { current: set }, options, observer);
  });

  afterAll(async () => {
    await engine.onModuleDestroy();
    if (server) {
      server.kill('SIGCONT');
      await stopRedis(server);
    }
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
    server.kill('SIGSTOP');
    try {
      const [degraded, refused] = [await ask(open), await ask(closed)];
      expect(degraded).toMatchObject({
        allowed: true,
        degraded: true,
        degraded_cause: 'backend_timeout',
        status: 200,
      });
      expect(refused).toMatchObject({
        allowed: false,
        status: 503,
        reason: 'backend_timeout',
        code: 'backend.timeout',
      });
      expect(refused.retry_after_ms).toBeGreaterThanOrEqual(1_000);
    } finally {
      server.kill('SIGCONT');
    }
    // then, once Redis resumes, the timed-out scripts run: the degraded decision WAS counted (ADR 0001)
    await waitFor(async () => {
      const d = await sut.decide({ selectors: { tenant, principal: 'p', route: open }, cost: 0 });
      return !d.degraded && d.policies[0].windows[0].remaining === 998;
    });
    expect(engine.health().breaker).toBe('closed');
  });

  it('stopped Redis: unavailable, the breaker opens and fails fast, then recovers after a restart', async () => {
    await waitFor(async () => !(await ask(open)).degraded);
    breakerStates.length = 0;
    backendErrors.length = 0;
    // given the Redis process is gone
    await stopRedis(server);
    await waitFor(() => engine.health().connection !== 'ready');

    const degraded = await ask(open);
    const refused = await ask(closed);
    expect(degraded).toMatchObject({ allowed: true, degraded: true, degraded_cause: 'backend_unavailable' });
    expect(refused).toMatchObject({
      allowed: false,
      status: 503,
      reason: 'backend_unavailable',
      code: 'backend.unavailable',
    });
    await ask(open);
    // three consecutive failures opened the breaker: the next call does not even try
    expect(breakerStates).toEqual(['open']);
    expect(engine.health()).toMatchObject({ status: 'unavailable', breaker: 'open' });
    const started = performance.now();
    expect(await ask(closed)).toMatchObject({ status: 503, reason: 'backend_unavailable' });
    expect(performance.now() - started).toBeLessThan(50);
    expect(new Set(backendErrors)).toEqual(new Set(['backend_unavailable']));

    // when Redis comes back (empty, without the script)
    server = await startRedis();
    // then a probe after the cooldown closes the breaker and decisions are exact again
    await waitFor(async () => (await ask(closed)).status === 200);
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
