/**
 * GCRA (the generic cell rate algorithm) end to end through the engine, on a REAL Redis: smooth
 * spacing after a burst, costs weighed in emission intervals, idempotent replay, a runtime override
 * of its rate, and the state view. Its maths are also in the registry's parity walk
 * (algorithm-parity.test.ts). Real: Redis (DB 12). Each test has its own policy and tenant.
 */
import {
  DecisionService,
  OverridesService,
  OverridesStore,
  overrideIndexKey,
  overridesKey,
  type Decision,
} from '@tally/engine';
import type { Policy, WindowSpec } from '@tally/policy';
import { testPolicy, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStack } from './support/engine-stack';

const DB = 12;
const SHARDS = 16;
const T0 = Date.UTC(2026, 10, 30, 9, 0, 0);

/** 10 per second (one every T = 100 ms), up to `burst` at once. */
const gcra = (burst: number, limit = 10, periodMs = 1_000): WindowSpec => ({
  name: 'spaced',
  role: 'burst',
  algorithm: 'gcra',
  limit,
  periodMs,
  burst,
});

describe('gcra windows', () => {
  let stack: EngineStack;
  let fixedNow: number | undefined;
  let sut: DecisionService;
  let overrides: OverridesService;

  const use = (window: WindowSpec): { name: string; tenant: string } => {
    const name = uniqueName('gcra');
    const policy: Policy = testPolicy(name, { key: ['tenant'], windows: [window], maxCost: window.burst });
    stack.use(policy);
    return { name, tenant: uniqueName('t') };
  };
  const at = (ms: number, tenant: string, cost = 1, idempotencyKey?: string): Promise<Decision> => {
    fixedNow = T0 + ms;
    return sut.decide({
      selectors: { tenant },
      cost,
      ...(idempotencyKey !== undefined && { idempotency_key: idempotencyKey }),
    });
  };
  const window = (d: Decision) => d.policies[0].windows[0];

  beforeAll(async () => {
    stack = await EngineStack.start({
      db: DB,
      shards: SHARDS,
      tokenSecret: 'gcra-test-secret-0123456789',
      engine: { scriptNow: () => fixedNow },
      alsoDelete: (k) => [overridesKey(k), overrideIndexKey(k)],
    });
    sut = new DecisionService(stack.engine, stack.source, stack.options);
    overrides = new OverridesService(
      new OverridesStore(stack.sutRedis, stack.options),
      stack.source,
      stack.options,
    );
  });

  afterAll(() => stack.close());

  it('lets a burst of `burst` through at once, then exactly one per emission interval', async () => {
    const { tenant } = use(gcra(3));
    // given a burst of 3 at t = 0
    const burst = [await at(0, tenant), await at(0, tenant), await at(0, tenant)];
    expect(burst.map((d) => [d.allowed, window(d).remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    // then the 4th waits exactly one interval (T = 100 ms), and is reset when TAT is reached (300 ms)
    const fourth = await at(0, tenant);
    expect(fourth).toMatchObject({ allowed: false, reason: 'burst_quota_exhausted', retry_after_ms: 100 });
    expect(window(fourth)).toMatchObject({ remaining: 0, reset_ms: 300 });
    // and from then on one per 100 ms: 1 ms early is denied, on time is allowed, a second one denied
    for (let k = 1; k <= 5; k++) {
      const early = await at(100 * k - 1, tenant);
      expect(early).toMatchObject({ allowed: false, retry_after_ms: 1 });
      expect((await at(100 * k, tenant)).allowed).toBe(true);
      expect(await at(100 * k, tenant)).toMatchObject({ allowed: false, retry_after_ms: 100 });
    }
  });

  it('weighs a cost as that many emission intervals, with an exact retry-after', async () => {
    const { tenant } = use(gcra(5));
    // given a cost of 3 out of a burst of 5 (TAT = now + 300 ms)
    expect(window(await at(0, tenant, 3))).toMatchObject({ remaining: 2, reset_ms: 300 });
    // when a cost of 4 comes 50 ms later: it needs 250 + 400 ≤ 500 ms of tolerance, 150 ms too much
    const denied = await at(50, tenant, 4);
    expect(denied).toMatchObject({ allowed: false, retry_after_ms: 150 });
    // then it passes exactly then, and leaves nothing
    expect(await at(199, tenant, 4)).toMatchObject({ allowed: false, retry_after_ms: 1 });
    const allowed = await at(200, tenant, 4);
    expect(allowed.allowed).toBe(true);
    expect(window(allowed)).toMatchObject({ remaining: 0, reset_ms: 500 });
  });

  it('keeps a fraction of a millisecond when the interval is not whole (3 per second)', async () => {
    const { tenant } = use(gcra(3, 3, 1_000));
    // given a burst of 3 at t = 0: TAT = 3 × 333.33… = exactly 1000 ms
    for (let i = 0; i < 3; i++) expect((await at(0, tenant)).allowed).toBe(true);
    // then the next units fit at ⌈333.33…⌉, ⌈666.66…⌉ and 1000 ms: the thirds add up, no drift
    for (const t of [334, 667, 1_000]) {
      expect(await at(t - 1, tenant)).toMatchObject({ allowed: false, retry_after_ms: 1 });
      expect((await at(t, tenant)).allowed).toBe(true);
    }
    expect(window(await at(1_000, tenant, 0))).toMatchObject({ remaining: 0, reset_ms: 1_000 });
  });

  it('answers a replay with the stored decision and spends nothing', async () => {
    const { tenant } = use(gcra(2));
    const first = await at(0, tenant, 1, 'once');
    const replay = await at(10, tenant, 1, 'once');
    expect(replay).toMatchObject({ allowed: true, replayed: true, decision_id: first.decision_id });
    expect(window(replay).remaining).toBe(window(first).remaining);
    // the burst still has its second unit: the replay took none
    expect(await at(10, tenant)).toMatchObject({ allowed: true });
    expect(await at(10, tenant)).toMatchObject({ allowed: false });
  });

  it('takes an override of its limit as a new rate, the burst unchanged, and blocks at 0', async () => {
    const { name, tenant } = use(gcra(2));
    // given an override of 1 per second (T = 1000 ms) for this tenant
    const written = await overrides.put(
      { policy: name, key: tenant },
      { limits: { spaced: 1 }, reason: 'slow down' },
      'ops',
    );
    expect(written.ok).toBe(true);
    // then a burst of 2 passes, and the next unit fits 1000 ms later, not 100
    expect((await at(0, tenant)).allowed).toBe(true);
    expect((await at(0, tenant)).allowed).toBe(true);
    const denied = await at(0, tenant);
    expect(denied).toMatchObject({ allowed: false, retry_after_ms: 1_000 });
    expect(denied.policies[0]).toMatchObject({ override: { version: 1 }, windows: [{ limit: 1 }] });
    // and an override of 0 blocks the key
    await overrides.put({ policy: name, key: tenant }, { limits: { spaced: 0 }, reason: 'block' }, 'ops');
    expect(await at(5_000, tenant)).toMatchObject({
      allowed: false,
      reason: 'blocked',
      code: 'quota.blocked',
    });
  });

  it('shows its theoretical arrival time in the state view', async () => {
    const { name, tenant } = use(gcra(4));
    await at(0, tenant, 3);
    fixedNow = T0 + 100;
    const state = await sut.state(name, { tenant });
    expect(state).toMatchObject({
      ok: true,
      state: {
        windows: [
          {
            algorithm: 'gcra',
            burst: 4,
            limit: 10,
            remaining: 2,
            reset_ms: 200,
            counters: { tat_ms: T0 + 300 },
          },
        ],
      },
    });
  });

  it('refuses a cost above the burst (413): it could never pass', async () => {
    const { tenant } = use(gcra(3));
    stack.source.current = {
      ...stack.source.current,
      policies: [{ ...stack.source.current.policies[0], maxCost: 100 }],
    };
    expect(await at(0, tenant, 4)).toMatchObject({ allowed: false, code: 'cost.too_large' });
  });
});
