/**
 * `on_backend_failure: local_fallback` with a REAL Redis process that this file starts on a free port
 * (a PrivateRedis), stops and restarts by its own pid. Real: Redis, the engine, the breaker, the
 * degraded ledger. While Redis is down the policy is enforced from this process's counters at its share
 * (here N = 1: the whole limit); when Redis is back, decisions are Redis's again without a restart and
 * the locally allowed decisions reach the outbox. The restarted server is empty (no persistence), so
 * every outbox entry it holds was appended after it came back.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  allShardKeys,
  DecisionService,
  DegradedLedger,
  EngineService,
  type Decision,
  type DecisionObserver,
  type EngineOptions,
  type LocalFallbackOutcome,
} from '@tally/engine';
import type { OutboxPayload } from '@tally/events';
import type { Policy, PolicySet } from '@tally/policy';
import { createRedisClient } from '@tally/redis';
import { eventually, PrivateRedis, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';

const SHARDS = 16;
const HOUR = 3_600_000;
/** Reconnects, breaker cooldowns and probes all happen within a few hundred milliseconds. */
const POLL = { timeoutMs: 10_000, intervalMs: 50 } as const;

let server: PrivateRedis;

/** The payloads of every shard outbox of the test server. */
async function outboxPayloads(): Promise<OutboxPayload[]> {
  const client = new Redis(server.url, { lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const payloads: OutboxPayload[] = [];
    for (const { outbox } of allShardKeys(SHARDS))
      for (const [, flat] of await client.xrange(outbox, '-', '+'))
        payloads.push(JSON.parse(flat[flat.indexOf('p') + 1]) as OutboxPayload);
    return payloads;
  } finally {
    client.disconnect();
  }
}

/** A local_fallback policy of one hourly fixed window of `limit`, keyed by principal. */
function localPolicy(name: string, limit: number, overflow: Policy['localFallbackOverflow']): Policy {
  return {
    ...backendFailurePolicy(name, 'local_fallback'),
    windows: [{ name: 'hourly', role: 'sustained', algorithm: 'fixed_window', limit, periodMs: HOUR }],
    localFallbackOverflow: overflow,
  };
}

/** The heap after a full collection: `--expose-gc` turned on for this process, then `gc` fetched. */
function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
  return process.memoryUsage().heapUsed;
}

describe(`${DecisionService.name} with local_fallback policies while Redis is down`, () => {
  let engine: EngineService | undefined;
  /** Added to the wall clock of the engine (breaker, degraded entries, local windows). */
  let offsetMs = 0;
  const local = uniqueName('local');
  const open = uniqueName('open');
  /** What the observer saw: counts per `policy:outcome`, and the most keys ever held. */
  let seen = { outcomes: new Map<string, number>(), maxKeys: 0 };

  async function setup(policies: Policy[], maxKeys: number, withLedger: boolean) {
    const options: EngineOptions = {
      redis: { mode: 'single', url: server.url },
      shards: SHARDS,
      backendTimeoutMs: 150,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'engine-local-fallback-secret',
      breaker: { failureThreshold: 3, cooldownMs: 200 },
      clock: () => Date.now() + offsetMs,
      localFallback: { share: 1, maxKeys },
    };
    seen = { outcomes: new Map<string, number>(), maxKeys: 0 };
    const observer: DecisionObserver = {
      onLocalFallback: (policy: string, outcome: LocalFallbackOutcome, keys: number) => {
        const label = `${policy}:${outcome}`;
        seen.outcomes.set(label, (seen.outcomes.get(label) ?? 0) + 1);
        seen.maxKeys = Math.max(seen.maxKeys, keys);
      },
    };
    const set: PolicySet = { version: 'local-fallback-test', policies, loadedAt: 0 };
    engine = new EngineService(createRedisClient(options.redis, 'hot-path'), options, observer);
    await engine.onModuleInit();
    const degraded = withLedger ? new DegradedLedger(engine, options, observer) : undefined;
    const sut = new DecisionService(engine, { current: set }, options, observer, degraded);
    return { engine, sut, degraded };
  }

  async function redisGoesAway(e: EngineService): Promise<void> {
    await server.stop();
    await eventually(
      () => e.health().connection !== 'ready',
      (ok) => ok,
      POLL,
    );
  }

  /** Puts the engine's clock 1 s into an hour, so an hourly window cannot end during a test. */
  function startOfAnHour(): void {
    const now = Date.now();
    offsetMs = Math.ceil(now / HOUR) * HOUR + 1_000 - now;
  }

  beforeAll(async () => {
    server = await PrivateRedis.start();
  });

  afterEach(async () => {
    await engine?.onModuleDestroy();
    engine = undefined;
    offsetMs = 0;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('allows exactly the limit per window at N = 1, denies the rest by quota, and is exact again once Redis is back', async () => {
    const {
      engine: e,
      sut,
      degraded,
    } = await setup(
      [localPolicy(local, 100, 'fail_closed'), backendFailurePolicy(open, 'fail_open')],
      1_000,
      true,
    );
    const tenant = uniqueName('t');
    const ask = (route: string, cost = 1) =>
      sut.decide({ selectors: { tenant, principal: 'p', route }, cost });
    expect(await ask(local)).toMatchObject({ allowed: true, degraded: false });

    // given Redis is stopped, the engine's clock at the start of an hour
    await redisGoesAway(e);
    startOfAnHour();
    // when 250 decisions ask: 150 one by one, 100 in one batch (its pipeline fails as a whole)
    const decided: Decision[] = [];
    for (let i = 0; i < 150; i++) decided.push(await ask(local));
    decided.push(
      ...(await sut.decideBatch(
        Array.from({ length: 100 }, () => ({ selectors: { tenant, principal: 'p', route: local }, cost: 1 })),
      )),
    );

    // then exactly 100 are allowed, degraded with the cause, and the rest denied by quota
    const allowed = decided.filter((d) => d.allowed);
    const denied = decided.filter((d) => !d.allowed);
    expect(allowed).toHaveLength(100);
    expect(decided.slice(0, 100).every((d) => d.allowed)).toBe(true);
    for (const d of allowed)
      expect(d).toMatchObject({ kind: 'allowed', degraded: true, degraded_cause: 'backend_unavailable' });
    expect(allowed.at(-1)?.policies[0].windows[0]).toMatchObject({ limit: 100, remaining: 0 });
    expect(denied).toHaveLength(150);
    for (const d of denied) {
      expect(d).toMatchObject({
        kind: 'denied',
        reason: 'sustained_quota_exhausted',
        code: 'quota.exceeded',
        degraded: true,
        degraded_cause: 'backend_unavailable',
        binding: { policy: local, window: 'hourly', limit: 100, remaining: 0 },
      });
      // the window ends one hour after the 1 s mark the clock was put at, give or take the test's time
      expect(d.retry_after_ms).toBeGreaterThan(HOUR - 60_000);
      expect(d.retry_after_ms).toBeLessThanOrEqual(HOUR - 1_000);
    }
    // a fail_open policy still lets everything through uncounted, as before
    const failOpen = await ask(open);
    expect(failOpen).toMatchObject({ allowed: true, degraded: true, reason: null });
    // and another key has its own limit
    const otherKey = await sut.decide({ selectors: { tenant, principal: 'other', route: local }, cost: 1 });
    expect(otherKey).toMatchObject({ allowed: true, degraded: true });
    expect(seen.outcomes.get(`${local}:allowed`)).toBe(101);
    expect(seen.outcomes.get(`${local}:denied`)).toBe(150);

    // when the next window starts: the same key gets exactly 100 again
    offsetMs += HOUR;
    const next: Decision[] = [];
    for (let i = 0; i < 120; i++) next.push(await ask(local));
    expect(next.filter((d) => d.allowed)).toHaveLength(100);
    expect(next.slice(100).every((d) => d.kind === 'denied')).toBe(true);

    // when Redis comes back (empty): no restart of anything, and peeks (cost 0, owed to no ledger)
    // until the breaker lets a step through
    const owed = [...allowed, ...next.filter((d) => d.allowed), failOpen, otherKey].map((d) => d.decision_id);
    await server.restart();
    await eventually(
      () => ask(local, 0),
      (d) => !d.degraded,
      POLL,
    );
    // then decisions are Redis's again, exact: its counter starts at what it holds (nothing)
    expect(await ask(local)).toMatchObject({
      allowed: true,
      degraded: false,
      policies: [{ windows: [{ remaining: 99 }] }],
    });
    // and every decision allowed while Redis was down is in the outbox, once, as degraded; the
    // denials consumed nothing and owe nothing
    const degradedIds = async () =>
      (await outboxPayloads()).filter((p) => p.outcome === 'degraded').map((p) => p.id);
    await eventually(degradedIds, (ids) => ids.length >= owed.length && degraded?.size === 0, POLL);
    expect((await degradedIds()).sort()).toEqual(owed.sort());
  });

  it('holds at most its key bound under 100,000 distinct keys, the heap bounded, the rest by its overflow mode', async () => {
    const bound = 10_000;
    const { engine: e, sut } = await setup([localPolicy(local, 5, 'fail_closed')], bound, false);
    const tenant = uniqueName('t');
    const ask = (i: number) =>
      sut.decide({ selectors: { tenant, principal: `p${i}`, route: local }, cost: 1 });
    await redisGoesAway(e);
    startOfAnHour();

    // given the table already full (twice the bound of distinct keys)
    const counts = { allowed: 0, refused: 0 };
    const tally = (d: Decision) => (d.allowed ? counts.allowed++ : counts.refused++);
    for (let i = 0; i < 2 * bound; i++) tally(await ask(i));
    const heapFull = heapAfterGc();
    // when 80,000 more distinct keys ask
    for (let i = 2 * bound; i < 100_000; i++) tally(await ask(i));
    const heapAfter = heapAfterGc();

    // then the keys held never pass the bound, and the heap did not grow with the keys
    expect(sut.localFallbackKeys).toBe(bound);
    expect(seen.maxKeys).toBe(bound);
    expect(seen.outcomes.get(`${local}:overflow_closed`)).toBe(100_000 - bound);
    expect(counts).toEqual({ allowed: bound, refused: 100_000 - bound });
    // 80,000 more held keys would take several MB (≈ 200+ bytes each); garbage aside, nothing stays
    expect(heapAfter - heapFull).toBeLessThan(4 * 1024 * 1024);
    // the keys beyond the bound were refused as the policy says, never let through uncounted
    const refused = await ask(100_001);
    expect(refused).toMatchObject({
      allowed: false,
      kind: 'unavailable',
      reason: 'backend_unavailable',
      message: 'local fallback: the in-memory key bound is reached',
    });
    // and a key held goes on being counted to its limit
    for (let i = 0; i < 4; i++) expect((await ask(0)).allowed).toBe(true);
    expect(await ask(0)).toMatchObject({ kind: 'denied', reason: 'sustained_quota_exhausted' });
    await server.restart();
  });
});
