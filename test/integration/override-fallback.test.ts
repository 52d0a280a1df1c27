/**
 * Overrides while Redis does not answer, with a REAL Redis process that this file starts on a free
 * port (a PrivateRedis) and stops by its own pid. Real: Redis, the engine, the breaker, the override
 * store and this process's override copy (`OverridesCache`, polling every 100 ms). A block holds
 * under `local_fallback` and `fail_open`, a raise raises the local share, a block written while the
 * copy is running holds once the copy's version includes it, and the copy stays within its bound.
 */
import {
  DecisionService,
  EngineService,
  encodeScope,
  localFallbackOf,
  overrideField,
  OverridesCache,
  OverridesStore,
  shardOf,
  type Decision,
  type EngineOptions,
  type OverrideCacheStats,
} from '@tally/engine';
import type { Policy, PolicySet } from '@tally/policy';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { eventually, PrivateRedis, uniqueName } from '@tally/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';

const SHARDS = 16;
const HOUR = 3_600_000;
const REFRESH_MS = 100;
/** Reconnects, breaker cooldowns and refresh rounds all happen well within this on a busy machine. */
const POLL = { timeoutMs: 10_000, intervalMs: 25 } as const;

let server: PrivateRedis;

/** One hourly fixed window of `limit`, keyed by principal, failing as `mode` says. */
function policy(name: string, limit: number, mode: Policy['onBackendFailure']): Policy {
  return {
    ...backendFailurePolicy(name, mode),
    windows: [{ name: 'hourly', role: 'sustained', algorithm: 'fixed_window', limit, periodMs: HOUR }],
    localFallbackOverflow: 'fail_closed',
  };
}

describe(`${OverridesCache.name}: overrides hold while Redis does not answer`, () => {
  let engine: EngineService | undefined;
  let cache: OverridesCache | undefined;
  let stats: OverrideCacheStats | undefined;
  let stopped = false;

  async function setup(policies: Policy[], opts: { share?: number; maxEntries?: number } = {}) {
    const options: EngineOptions = {
      redis: { mode: 'single', url: server.url },
      shards: SHARDS,
      backendTimeoutMs: 150,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'override-fallback-secret',
      breaker: { failureThreshold: 3, cooldownMs: 200 },
      localFallback: { share: opts.share ?? 1, maxKeys: 1_000 },
      overrideCache: { refreshMs: REFRESH_MS, maxEntries: opts.maxEntries ?? 1_000 },
    };
    const set: PolicySet = { version: 'override-fallback-test', policies, loadedAt: 0 };
    const redis: RedisClient = createRedisClient(options.redis, 'hot-path');
    const observer = { onOverrideCache: (s: OverrideCacheStats) => (stats = s) };
    engine = new EngineService(redis, options, observer);
    await engine.onModuleInit();
    cache = new OverridesCache(redis, options, observer);
    cache.onModuleInit();
    const store = new OverridesStore(redis, options);
    const local = localFallbackOf(options, observer, cache);
    const sut = new DecisionService(engine, { current: set }, options, observer, undefined, local);
    return { engine, cache, store, sut };
  }

  /** Waits until the copy of `tenant`'s shard includes every change up to `version`. */
  async function copyIncludes(c: OverridesCache, tenant: string, version: number): Promise<void> {
    await eventually(
      () => c.versionOf(shardOf(tenant, SHARDS)) ?? -1,
      (held) => held >= version,
      POLL,
    );
  }

  async function redisGoesAway(e: EngineService): Promise<void> {
    await server.stop();
    stopped = true;
    await eventually(
      () => e.health().connection !== 'ready',
      (ok) => ok,
      POLL,
    );
  }

  const blocked = (d: Decision, cause = 'backend_unavailable') =>
    expect(d).toMatchObject({
      allowed: false,
      kind: 'denied',
      reason: 'blocked',
      code: 'quota.blocked',
      degraded: true,
      degraded_cause: cause,
    });

  beforeAll(async () => {
    server = await PrivateRedis.start();
  });

  afterEach(async () => {
    cache?.onModuleDestroy();
    await engine?.onModuleDestroy();
    engine = cache = stats = undefined;
    if (stopped) await server.restart();
    stopped = false;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('refuses a blocked key with Redis stopped, under local_fallback and fail_open; fail_closed stays 503', async () => {
    const local = uniqueName('local');
    const open = uniqueName('open');
    const closed = uniqueName('closed');
    const {
      engine: e,
      cache: c,
      store,
      sut,
    } = await setup([
      policy(local, 10, 'local_fallback'),
      policy(open, 10, 'fail_open'),
      policy(closed, 10, 'fail_closed'),
    ]);
    const tenant = uniqueName('t');
    const ask = (route: string, principal = 'abuser') =>
      sut.decide({ selectors: { tenant, principal, route }, cost: 1 });
    // given the key blocked on all three policies
    let version = 0;
    for (const name of [local, open, closed]) {
      const written = await store.set(
        { policy: name, key: 'abuser', tenant },
        { limits: { hourly: 0 }, expiresAtMs: null, reason: 'abuse', setBy: 'ops' },
      );
      version = Math.max(version, written.version);
    }
    // with Redis answering, the block is the script's: 429 blocked, not degraded
    expect(await ask(local)).toMatchObject({ code: 'quota.blocked', reason: 'blocked', degraded: false });
    await copyIncludes(c, tenant, version);

    // when Redis stops
    await redisGoesAway(e);

    // then the blocked key is refused 3 of 3 times under local_fallback, and under fail_open
    for (let i = 0; i < 3; i++) blocked(await ask(local));
    const failOpen = await ask(open);
    blocked(failOpen);
    expect(failOpen).toMatchObject({
      retry_after_ms: 86_400_000,
      binding: { policy: open, window: 'hourly', limit: 0, remaining: 0 },
      policies: [{ name: open, override: { version: expect.any(Number) as number } }],
    });
    // fail_closed answers as ever: 503 with the cause
    expect(await ask(closed)).toMatchObject({
      allowed: false,
      kind: 'unavailable',
      code: 'backend.unavailable',
    });
    // and a key not blocked is decided as the fail modes say
    expect(await ask(local, 'someone')).toMatchObject({ allowed: true, degraded: true });
    expect(await ask(open, 'someone')).toMatchObject({ allowed: true, degraded: true });
  });

  it('counts a raised key against its raised limit while Redis is stopped (the local share follows the raise)', async () => {
    const local = uniqueName('local');
    // given share 2 (two processes), a limit of 6 (3 here), and one key raised to 40 (20 here)
    const {
      engine: e,
      cache: c,
      store,
      sut,
    } = await setup([policy(local, 6, 'local_fallback')], {
      share: 2,
    });
    const tenant = uniqueName('t');
    const written = await store.set(
      { policy: local, key: 'vip', tenant },
      { limits: { hourly: 40 }, expiresAtMs: null, reason: 'launch', setBy: 'ops' },
    );
    await copyIncludes(c, tenant, written.version);
    await redisGoesAway(e);
    const ask = (principal: string) =>
      sut.decide({ selectors: { tenant, principal, route: local }, cost: 1 });

    // when each key asks 25 times
    const vip: Decision[] = [];
    const plain: Decision[] = [];
    for (let i = 0; i < 25; i++) {
      vip.push(await ask('vip'));
      plain.push(await ask('plain'));
    }

    // then the raised key gets ⌊40 / 2⌋ = 20, the other ⌊6 / 2⌋ = 3, and the rest are quota denials
    expect(vip.filter((d) => d.allowed)).toHaveLength(20);
    expect(plain.filter((d) => d.allowed)).toHaveLength(3);
    expect(vip[0]).toMatchObject({
      degraded: true,
      policies: [{ override: { version: written.version }, windows: [{ limit: 40, remaining: 19 }] }],
    });
    expect(vip.at(-1)).toMatchObject({
      kind: 'denied',
      code: 'quota.exceeded',
      binding: { limit: 40, remaining: 0 },
    });
  });

  it('holds a block written just before the outage, once the copy’s version includes it', async () => {
    const local = uniqueName('local');
    const open = uniqueName('open');
    const {
      engine: e,
      cache: c,
      store,
      sut,
    } = await setup([policy(local, 10, 'local_fallback'), policy(open, 10, 'fail_open')]);
    const tenant = uniqueName('t');
    // given the copy running and read at least once (the block is not in it yet)
    await eventually(
      () => c.stats().ageMs,
      (age) => age < 10 * REFRESH_MS,
      POLL,
    );
    // when a block is written, and Redis stops as soon as the copy has it
    const started = performance.now();
    const writes = await Promise.all(
      [local, open].map((name) =>
        store.set(
          { policy: name, key: 'late', tenant },
          {
            limits: { hourly: 0 },
            expiresAtMs: Date.now() + HOUR,
            reason: 'abuse',
            setBy: 'ops',
          },
        ),
      ),
    );
    await copyIncludes(c, tenant, Math.max(...writes.map((w) => w.version)));
    const tookMs = performance.now() - started;
    await redisGoesAway(e);

    // then the block holds under both modes, waiting until its expiry
    const ask = (route: string) => sut.decide({ selectors: { tenant, principal: 'late', route }, cost: 1 });
    for (const route of [local, open]) {
      const d = await ask(route);
      blocked(d);
      expect(d.retry_after_ms).toBeGreaterThan(HOUR - 60_000);
    }
    // the copy took about one refresh period to have it (the documented bound: period + one read)
    expect(tookMs).toBeLessThan(POLL.timeoutMs);
    // and while Redis is down the copy's age grows, as the metrics show
    await eventually(
      () => stats?.ageMs ?? 0,
      (age) => age > 3 * REFRESH_MS,
      POLL,
    );
    blocked(await ask(local));
  });

  it('holds at most its bound of overrides, blocks first, and counts the rest', async () => {
    const local = uniqueName('local');
    const { cache: c, store } = await setup([policy(local, 10, 'local_fallback')], { maxEntries: 50 });
    const tenant = uniqueName('t');
    // given 200 raises and then 20 blocks of one policy, over 16 shards (the tenant is the key's)
    const write = (key: string, limit: number) =>
      store.set(
        { policy: local, key, tenant: `${tenant}-${key}` },
        { limits: { hourly: limit }, expiresAtMs: null, reason: 'bulk', setBy: 'ops' },
      );
    for (let i = 0; i < 200; i++) await write(`k${i}`, 100 + i);
    for (let i = 0; i < 20; i++) await write(`b${i}`, 0);

    // when the copy has read every shard since the last write
    const last = Date.now();
    await eventually(
      () => c.stats(),
      (s) => s.ageMs < Date.now() - last && s.entries + s.skipped.blocks + s.skipped.limits === 220,
      POLL,
    );

    // then it holds its bound, every block among them, and counts the 170 raises it left out
    expect(c.stats()).toMatchObject({ entries: 50, skipped: { blocks: 0, limits: 170 } });
    for (let i = 0; i < 20; i++) {
      const key = `b${i}`;
      const t = `${tenant}-${key}`;
      expect(c.lookup(shardOf(t, SHARDS), overrideField(local, encodeScope(t), key))?.limits).toBeNull();
    }
  });
});
