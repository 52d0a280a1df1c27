/**
 * A decision whose Redis step timed out but committed, projected: the ledger counts it once. REAL:
 * a Redis process this file starts, pauses (SIGSTOP), stops and restarts by its own pid (the engine's);
 * the shared test Redis (the projection namespace, written by the projector's own store); the
 * engine, the degraded ledger, the relay's event builders. Kafka only carries the events between the
 * relay and the projector, in stream order per partition: here each outbox entry is handed to the
 * store as its own step, as a projector would meet the two copies in two batches.
 *
 * A paused Redis cannot answer, so the deadline passes for certain; on resume it runs the queued
 * script, which commits: the outbox then holds the decision `allowed` (Redis time) and, once the
 * degraded ledger flushes, `degraded` (the API's clock) under the same id. The API's clock is set an
 * hour ahead of Redis's for the degraded ledger (what a decision at hh:59:59.95 with a 100 ms deadline,
 * or a skewed replica, does): the two copies fall in different UTC hours.
 */
import {
  DecisionService,
  DegradedLedger,
  EngineService,
  allShardKeys,
  type EngineOptions,
} from '@tally/engine';
import {
  ledgerEventFromOutbox,
  usageEventFromOutbox,
  type LedgerEvent,
  type OutboxPayload,
} from '@tally/events';
import type { PolicySet } from '@tally/policy';
import { ProjectionKeys, ProjectionStore } from '@tally/projections';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { eventually, PrivateRedis, testEnv, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { encodeTime } from 'ulid';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';

const SHARDS = 4;
const H = 3_600_000;
const POLL = { timeoutMs: 10_000, intervalMs: 50 } as const;

interface OutboxRow {
  readonly fields: { p: string; t: string; r: string };
  readonly payload: OutboxPayload;
}

describe('a timed-out decision that committed, in the ledger', () => {
  let server: PrivateRedis;
  let projections: RedisClient;
  let store: ProjectionStore;
  let engine: EngineService | undefined;
  const open = uniqueName('open');
  const closed = uniqueName('closed');
  const set: PolicySet = {
    version: 'twins-test',
    policies: [backendFailurePolicy(open, 'fail_open'), backendFailurePolicy(closed, 'fail_closed')],
    loadedAt: 0,
  };

  beforeAll(async () => {
    server = await PrivateRedis.start();
    projections = createRedisClient({ mode: 'single', url: testEnv().redisUrl }, 'worker', 'twins-test');
    store = new ProjectionStore(projections, { auditRetentionMs: 24 * H, dedupTtlMs: 48 * H });
  });

  afterEach(async () => {
    await engine?.onModuleDestroy();
    engine = undefined;
  });

  afterAll(async () => {
    await projections?.quit();
    await server?.stop();
  });

  /** Engine and decisions on the private Redis; the degraded ledger's clock `skewMs` ahead. */
  async function setup(skewMs: number) {
    const options: EngineOptions = {
      redis: { mode: 'single', url: server.url },
      shards: SHARDS,
      backendTimeoutMs: 150,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'degraded-twins-secret-0123',
      breaker: { failureThreshold: 100, cooldownMs: 200 },
      degradedLedger: { probeIntervalMs: 100 },
    };
    engine = new EngineService(createRedisClient(options.redis, 'hot-path'), options);
    await engine.onModuleInit();
    const degraded = new DegradedLedger(engine, { ...options, clock: () => Date.now() + skewMs });
    const sut = new DecisionService(engine, { current: set }, options, undefined, degraded);
    const tenant = uniqueName('t');
    const ask = (route: string) => sut.decide({ selectors: { tenant, principal: 'p', route }, cost: 3 });
    return { degraded, ask, tenant };
  }

  /** The outbox entries of a decision, in stream order. */
  async function rowsOf(decisionId: string): Promise<OutboxRow[]> {
    const client = new Redis(server.url, { lazyConnect: true, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const rows: OutboxRow[] = [];
      for (const { outbox } of allShardKeys(SHARDS))
        for (const [, flat] of await client.xrange(outbox, '-', '+')) {
          const f: Record<string, string> = {};
          for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]] = flat[i + 1];
          const payload = JSON.parse(f.p) as OutboxPayload;
          if (payload.id === decisionId) rows.push({ fields: { p: f.p, t: f.t, r: f.r }, payload });
        }
      return rows;
    } finally {
      client.disconnect();
    }
  }

  /**
   * Projects the rows, each as a step of its own (relay builders → projector store), into a fresh
   * namespace; returns the usage events built and the tenant's projected usage: cost and count
   * summed over every hour bucket it has.
   */
  async function project(rows: readonly OutboxRow[], tenant: string) {
    // One shard: both copies of a decision carry the same Kafka key, so they reach the same partition
    // and so the same shard (shardOfPartition); the twins meet in its dedup sets.
    const keys = new ProjectionKeys(uniqueName('twins').replace(/[^a-z0-9-]/g, ''), 0);
    try {
      const usage: LedgerEvent[] = [];
      for (const { fields } of rows) {
        const u = usageEventFromOutbox(fields);
        if (u !== null) usage.push(u);
        // The one record the relay publishes for the row.
        const events = [ledgerEventFromOutbox(fields)];
        await store.applyBatch(keys, events, []);
      }
      let cost = 0;
      let count = 0;
      for (const key of await projections.keys(keys.usage(tenant, 'hour', 0).replace(/[^:]+$/, '*'))) {
        cost += Number((await projections.hget(key, 'cost:_all')) ?? 0);
        count += Number((await projections.hget(key, 'count:_all')) ?? 0);
      }
      return { usageIds: usage.map((e) => e.id), cost, count };
    } finally {
      const found = await projections.keys(keys.all());
      if (found.length > 0) await projections.del(...found);
    }
  }

  /** Pauses Redis for one decision: the deadline passes for certain, the script runs on resume. */
  async function timedOut<T>(decide: () => Promise<T>): Promise<T> {
    server.pause();
    try {
      return await decide();
    } finally {
      server.resume();
    }
  }

  for (const skewMs of [0, H]) {
    it(`fail_open, committed then timed out (API clock +${skewMs / H} h): projected once`, async () => {
      const { degraded, ask, tenant } = await setup(skewMs);
      // given a decision that timed out at the API and degraded
      const d = await timedOut(() => ask(open));
      expect(d).toMatchObject({ allowed: true, degraded: true, degraded_cause: 'backend_timeout' });
      expect(degraded.size).toBe(1);
      // when Redis runs the queued script (it commits) and the degraded ledger flushes
      await eventually(
        async () => degraded.size === 0 && (await rowsOf(d.decision_id)).length === 2,
        (ok) => ok,
        POLL,
      );
      // then the outbox holds both copies under one id: the committed one first
      const rows = await rowsOf(d.decision_id);
      expect(rows.map((r) => r.payload.outcome)).toEqual(['allowed', 'degraded']);
      // (the degraded copy's time is when the API gave up, before Redis resumed and ran the script:
      // even on one clock it may precede the committed copy's; an hour ahead, it is in a later hour)
      const [committedMs, degradedMs] = rows.map((r) => Number(r.fields.t));
      expect(degradedMs - committedMs).toBeGreaterThan(skewMs - POLL.timeoutMs);
      // and the projector counts the decision exactly once, whatever the hours of the two copies
      const projected = await project(rows, tenant);
      expect(projected.usageIds).toEqual([d.decision_id, d.decision_id]);
      expect(projected).toMatchObject({ cost: 3, count: 1 });
      // and in the other order too (two relays, a re-claim): the first copy met is the one kept
      expect(await project([...rows].reverse(), tenant)).toMatchObject({ cost: 3, count: 1 });
    });
  }

  it('copies in three different hours (minted, committed, degraded), in either order: projected once', async () => {
    // given a decision minted at 10:59:59.990 by an API whose clock is behind Redis's: the script
    // committed at 11:00:00.020 (Redis), the degraded copy says 12:00:00.100 (a later, skewed replica)
    const tenant = uniqueName('t');
    const id = `${encodeTime(Date.parse('2026-11-30T10:59:59.990Z'), 10)}0123456789ABCDEF`;
    const p = (extra: Partial<OutboxPayload>) =>
      JSON.stringify({
        v: 1,
        id,
        policy_set_version: 'v1',
        tenant,
        selectors: { tenant, principal: 'p' },
        attributes: {},
        cost: 5,
        outcome: 'allowed',
        policies: [{ name: open, mode: 'enforce', key: 'p', windows: [] }],
        ...extra,
      } satisfies OutboxPayload);
    const committed: OutboxRow = {
      fields: { p: p({}), t: String(Date.parse('2026-11-30T11:00:00.020Z')), r: '[]' },
      payload: JSON.parse(p({})) as OutboxPayload,
    };
    const degradedP = p({ outcome: 'degraded', degraded_cause: 'backend_timeout' });
    const degraded: OutboxRow = {
      fields: { p: degradedP, t: String(Date.parse('2026-11-30T12:00:00.100Z')), r: '[]' },
      payload: JSON.parse(degradedP) as OutboxPayload,
    };
    expect(await project([committed, degraded], tenant)).toMatchObject({ cost: 5, count: 1 });
    expect(await project([degraded, committed], tenant)).toMatchObject({ cost: 5, count: 1 });
  });

  it('fail_closed, committed then timed out: refused, yet the committed usage is projected once', async () => {
    const { degraded, ask, tenant } = await setup(H);
    const d = await timedOut(() => ask(closed));
    expect(d).toMatchObject({ allowed: false, kind: 'unavailable', reason: 'backend_timeout' });
    // nothing is owed to the ledger by the API (checked synchronously: nothing can be appended later)
    expect(degraded.size).toBe(0);
    await eventually(
      async () => (await rowsOf(d.decision_id)).length === 1,
      (ok) => ok,
      POLL,
    );
    const rows = await rowsOf(d.decision_id);
    expect(rows.map((r) => r.payload.outcome)).toEqual(['allowed']);
    expect(await project(rows, tenant)).toMatchObject({ usageIds: [d.decision_id], cost: 3, count: 1 });
  });

  it('never reached Redis: fail_open is projected once (degraded), fail_closed not at all', async () => {
    const { degraded, ask, tenant } = await setup(H);
    // given Redis is gone: no script can run later, the decisions fail at once
    await server.stop();
    const allowed = await ask(open);
    const refused = await ask(closed);
    expect(allowed).toMatchObject({ allowed: true, degraded: true, degraded_cause: 'backend_unavailable' });
    expect(refused).toMatchObject({ allowed: false, kind: 'unavailable', reason: 'backend_unavailable' });
    expect(degraded.size).toBe(1);
    // when Redis comes back (empty) and the ledger flushes
    await server.restart();
    await eventually(
      async () => degraded.size === 0 && (await rowsOf(allowed.decision_id)).length === 1,
      (ok) => ok,
      POLL,
    );
    // then only the degraded decision is in the ledger, once; the refused one nowhere
    const rows = await rowsOf(allowed.decision_id);
    expect(rows.map((r) => r.payload.outcome)).toEqual(['degraded']);
    expect(await rowsOf(refused.decision_id)).toEqual([]);
    expect(await project(rows, tenant)).toMatchObject({ usageIds: [allowed.decision_id], cost: 3, count: 1 });
  });
});
