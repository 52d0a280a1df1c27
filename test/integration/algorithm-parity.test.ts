/**
 * One parity test over the algorithm registry: for each algorithm that keeps its state in the policy
 * state hash, a reproducible random walk of (time, cost) around load factor 1.0 gets the same answers
 * from decide.lua on a real Redis (its piece, through DecisionService) as from the TypeScript maths
 * (`evaluateWindow`), step by step, and leaves the same state (the stored field, read with the
 * registry's codec). The walk runs through decide.lua's fast path and its general path (an
 * idempotency key on every step takes the general path). The client's local maths are held to the
 * same TypeScript in test/e2e/client.local-fallback.test.ts, for the algorithms the registry says
 * it runs. Concurrency keeps leases, not a state field: test/integration/leases.test.ts.
 * Real: Redis (DB 12). Nothing else.
 */
import {
  ALGORITHM_REGISTRY,
  DecisionService,
  evaluateWindow,
  shardOf,
  unpackWindowState,
  type WindowState,
} from '@tally/engine';
import type { Algorithm, Policy, WindowSpec } from '@tally/policy';
import { seededRandom, testPolicy, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStack } from './support/engine-stack';

const DB = 12;
const SHARDS = 64;
const SECRET = 'parity-test-secret-0123456789';
const T0 = Date.UTC(2026, 10, 30, 9, 0, 0) + 123;
const DAY = 86_400_000;

/**
 * Each algorithm's walk: its window, and the largest step between decisions (about a period's worth
 * of refill, so the walk keeps crossing the limit). A mapped type: a new algorithm needs its walk.
 */
const WALKS: {
  readonly [A in Algorithm]: {
    readonly window: Omit<WindowSpec, 'name' | 'role'>;
    readonly maxStepMs: number;
  };
} = {
  fixed_window: { window: { algorithm: 'fixed_window', limit: 10, periodMs: 60_000 }, maxStepMs: 25_000 },
  sliding_window: { window: { algorithm: 'sliding_window', limit: 10, periodMs: 60_000 }, maxStepMs: 25_000 },
  token_bucket: { window: { algorithm: 'token_bucket', limit: 10, periodMs: 60_000 }, maxStepMs: 9_000 },
  calendar_month: {
    window: { algorithm: 'calendar_month', limit: 10, periodMs: 31 * DAY },
    maxStepMs: 9 * DAY,
  },
  concurrency: { window: { algorithm: 'concurrency', limit: 10, periodMs: 60_000 }, maxStepMs: 0 },
  // 7 per minute (T = 8571.4… ms: TAT keeps a fraction of a ms), up to 5 at once
  gcra: { window: { algorithm: 'gcra', limit: 7, periodMs: 60_000, burst: 5 }, maxStepMs: 20_000 },
};

const HASH_STATE = (Object.keys(ALGORITHM_REGISTRY) as Algorithm[]).filter(
  (a) => ALGORITHM_REGISTRY[a].state !== undefined,
);

describe('algorithm registry parity (decide.lua on Redis = window-math.ts)', () => {
  let stack: EngineStack;
  let redis: Redis;
  let fixedNow: number | undefined;
  let sut: DecisionService;

  beforeAll(async () => {
    stack = await EngineStack.start({
      db: DB,
      shards: SHARDS,
      tokenSecret: SECRET,
      engine: { scriptNow: () => fixedNow },
      sutRedis: { enableAutoPipelining: false },
    });
    redis = stack.redis;
    sut = new DecisionService(stack.engine, stack.source, stack.options);
  });

  afterAll(() => stack.close());

  it('covers every algorithm whose state is a field of the policy state hash', () => {
    expect(HASH_STATE).toEqual(expect.arrayContaining(['fixed_window', 'sliding_window', 'token_bucket']));
    expect(HASH_STATE).not.toContain('concurrency');
  });

  describe.each(HASH_STATE)('%s', (algorithm) => {
    it.each([
      ['fast and general paths', false],
      ['the general path only', true],
    ])('answers and stores as the TypeScript maths on a random walk, %s', async (_, idempotent) => {
      // given one window of the algorithm, alone in its policy
      const name = uniqueName('parity');
      const spec: WindowSpec = { name: 'w', role: 'sustained', ...WALKS[algorithm].window };
      const policy: Policy = testPolicy(name, { windows: [spec], maxCost: 5 });
      stack.use(policy);
      const tenant = uniqueName('t');
      const random = seededRandom(42);
      let mirror: WindowState = {};
      let now = T0;
      let denials = 0;
      for (let step = 0; step < 120; step++) {
        // when a decision of a random cost (0 = a peek) comes a random while later
        now += Math.floor(random() * random() * WALKS[algorithm].maxStepMs);
        const cost = Math.floor(random() * 5);
        fixedNow = now;
        const decision = await sut.decide({
          selectors: { tenant, principal: 'p' },
          cost,
          ...(idempotent ? { idempotency_key: `walk-${step}` } : {}),
        });
        // then the script answers as the maths
        const expected = evaluateWindow(spec, mirror, now, cost);
        const window = decision.policies[0].windows[0];
        expect({
          step,
          allowed: decision.allowed,
          remaining: window.remaining,
          reset_ms: window.reset_ms,
          retry: decision.retry_after_ms,
        }).toEqual({
          step,
          allowed: expected.allowed,
          remaining: expected.remaining,
          reset_ms: expected.resetMs,
          retry: expected.retryAfterMs,
        });
        if (!expected.allowed) denials++;
        mirror = expected.nextState;
      }
      // and leaves the state the maths leave (the window's field of the policy key's hash)
      const field = await redis.hget(`tally:v1:{s${shardOf(tenant, SHARDS)}}:pk:${name}:${tenant}:p`, 'w');
      const stored = unpackWindowState(algorithm, field);
      expect(Object.fromEntries(Object.entries(stored).map(([k, v]) => [k, Number(v)]))).toEqual(mirror);
      // the walk must have hit the limit often, or it proved little about the edge
      expect(denials).toBeGreaterThan(10);
    });
  });
});
