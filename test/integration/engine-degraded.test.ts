/**
 * Degraded decisions reach the ledger, with a REAL Redis process that this file starts on a free port
 * (a PrivateRedis), stops and restarts by its own pid. Real: Redis, the engine, the degraded ledger. The
 * restarted server is empty (no persistence), so every outbox entry it holds was appended after it
 * came back: exactly the degraded decisions, and nothing twice.
 */
import {
  allShardKeys,
  DecisionService,
  DegradedLedger,
  EngineService,
  planDecision,
  shardKeys,
  shardOf,
  type Decision,
  type DecisionObserver,
  type DegradedLedgerOptions,
  type EngineOptions,
} from '@tally/engine';
import { ledgerEventFromOutbox, parseUsageEvent, type OutboxPayload } from '@tally/events';
import type { PolicySet } from '@tally/policy';
import { createRedisClient } from '@tally/redis';
import { eventually, PrivateRedis, sleep, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { ulid } from 'ulid';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';

const SHARDS = 16;
/** Reconnects, breaker cooldowns and probes all happen within a few hundred milliseconds. */
const POLL = { timeoutMs: 10_000, intervalMs: 50 } as const;
let server: PrivateRedis;

interface OutboxRow {
  readonly stream: string;
  readonly fields: Record<string, string>;
  readonly payload: OutboxPayload;
}

/** Every entry of every shard outbox of the test server. */
async function outboxRows(): Promise<OutboxRow[]> {
  const client = new Redis(server.url, { lazyConnect: true, retryStrategy: () => null });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const rows: OutboxRow[] = [];
    for (const { outbox } of allShardKeys(SHARDS)) {
      for (const [, flat] of await client.xrange(outbox, '-', '+')) {
        const fields: Record<string, string> = {};
        for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
        rows.push({ stream: outbox, fields, payload: JSON.parse(fields.p) as OutboxPayload });
      }
    }
    return rows;
  } finally {
    client.disconnect();
  }
}

const degradedRows = async () => (await outboxRows()).filter((r) => r.payload.outcome === 'degraded');

describe(`${DegradedLedger.name} with a Redis that goes away and comes back`, () => {
  let engine: EngineService | undefined;
  const open = uniqueName('open');
  const closed = uniqueName('closed');
  const set: PolicySet = {
    version: 'degraded-test',
    policies: [backendFailurePolicy(open, 'fail_open'), backendFailurePolicy(closed, 'fail_closed')],
    loadedAt: 0,
  };

  /** A fresh engine, ledger and decision service on the test server. */
  async function setup(ledger: Partial<DegradedLedgerOptions> = {}) {
    const options: EngineOptions = {
      redis: { mode: 'single', url: server.url },
      shards: SHARDS,
      backendTimeoutMs: 150,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'engine-degraded-secret-0123',
      breaker: { failureThreshold: 3, cooldownMs: 200 },
      degradedLedger: ledger,
    };
    const buffered: number[] = [];
    const observer: DecisionObserver = { onDegradedBuffered: (size) => buffered.push(size) };
    const client = createRedisClient(options.redis, 'hot-path');
    engine = new EngineService(client, options, observer);
    await engine.onModuleInit();
    const degraded = new DegradedLedger(engine, options, observer);
    const sut = new DecisionService(engine, { current: set }, options, observer, degraded);
    return { engine, client, degraded, sut, buffered };
  }

  async function redisGoesAway(e: EngineService): Promise<void> {
    await server.stop();
    await eventually(
      () => e.health().connection !== 'ready',
      (ok) => ok,
      POLL,
    );
  }

  beforeAll(async () => {
    server = await PrivateRedis.start();
  });

  afterEach(async () => {
    await engine?.onModuleDestroy();
    engine = undefined;
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('appends exactly the degraded decisions to their shard outboxes once Redis is back', async () => {
    const { engine: e, degraded, sut, buffered } = await setup();
    const ask = (tenant: string, route: string, cost: number) =>
      sut.decide({ selectors: { tenant, principal: 'p', route }, attributes: { plan: 'pro' }, cost });
    expect(await ask('acme', open, 1)).toMatchObject({ allowed: true, degraded: false });

    // given Redis is gone
    await redisGoesAway(e);
    const before = Date.now();
    // when fail_open decisions degrade: single ones over several tenants (shards) and a batch
    const decided: Decision[] = [];
    const tenants = Array.from({ length: 6 }, (_, i) => uniqueName(`t${i}`));
    for (const [i, tenant] of tenants.entries()) {
      decided.push(await ask(tenant, open, 1 + (i % 3)), await ask(tenant, open, 2));
    }
    decided.push(
      ...(await sut.decideBatch(
        tenants
          .slice(0, 3)
          .map((tenant) => ({ selectors: { tenant, principal: 'q', route: open }, cost: 4 })),
      )),
    );
    // and fail_closed decisions are refused (nothing spent) and a cost-0 peek degrades (nothing spent)
    const refused = [await ask(tenants[0], closed, 1), await ask(tenants[1], closed, 1)];
    const peek = await ask(tenants[2], open, 0);
    const after = Date.now();

    expect(decided.every((d) => d.allowed && d.degraded && d.degraded_cause === 'backend_unavailable')).toBe(
      true,
    );
    expect(refused.map((d) => d.kind)).toEqual(['unavailable', 'unavailable']);
    expect(peek).toMatchObject({ allowed: true, degraded: true });
    const N = decided.length;
    expect(N).toBe(15);
    expect(degraded.size).toBe(N);
    expect(buffered.at(-1)).toBe(N);

    // when Redis comes back (empty), with no decision to trigger a flush: the probe does it
    await server.restart();
    await eventually(
      async () => (await outboxRows()).length >= N && degraded.size === 0 && buffered.at(-1) === 0,
      (ok) => ok,
      { ...POLL, timeoutMs: 8_000 },
    );
    // then exactly N entries: the degraded decisions, each once. Final as soon as the buffer is
    // empty: nothing is appended after that, and an append that timed out but still ran (a
    // duplicate) went on the same connection before the retry that emptied the buffer.
    const rows = await outboxRows();
    expect(rows).toHaveLength(N);
    expect(rows.map((r) => r.payload.id).sort()).toEqual(decided.map((d) => d.decision_id).sort());
    expect(degraded.size).toBe(0);
    expect(buffered.at(-1)).toBe(0);

    for (const row of rows) {
      const { p, t, r } = row.fields;
      expect(row.payload).toMatchObject({ outcome: 'degraded', degraded_cause: 'backend_unavailable' });
      expect(row.stream).toBe(shardKeys(shardOf(row.payload.tenant, SHARDS)).outbox);
      expect(Number(t)).toBeGreaterThanOrEqual(before);
      expect(Number(t)).toBeLessThanOrEqual(after);
      expect(r).toBe('[]');
      // the entry's one record is a valid usage event: billing counts it, the audit trail reads
      // its outcome and cause
      const usage = ledgerEventFromOutbox({ p, t, r });
      expect(usage).toMatchObject({ type: 'tally.usage.v1' });
      expect(usage.data).toMatchObject({
        outcome: 'degraded',
        degraded_cause: 'backend_unavailable',
        cost: row.payload.cost,
      });
      expect(parseUsageEvent(JSON.stringify(usage)).ok).toBe(true);
    }
    const fromSingle = rows.find((r) => r.payload.id === decided[0].decision_id)?.payload;
    expect(fromSingle).toMatchObject({
      tenant: tenants[0],
      selectors: { tenant: tenants[0], principal: 'p', route: open },
      attributes: { plan: 'pro' },
      cost: 1,
      policy_set_version: 'degraded-test',
      policies: [
        { name: open, mode: 'enforce', key: 'p', windows: [{ name: 'w', role: 'sustained', limit: 1_000 }] },
      ],
    });
  });

  it('flushes on the first successful decision, before any probe', async () => {
    // given a probe too slow to matter
    const { engine: e, degraded, sut } = await setup({ probeIntervalMs: 600_000 });
    const tenant = uniqueName('nudge');
    const ask = (cost: number) => sut.decide({ selectors: { tenant, principal: 'p', route: open }, cost });
    await redisGoesAway(e);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await ask(1)).decision_id);
    expect(degraded.size).toBe(4);

    await server.restart();
    // when a decision succeeds again (after the reconnect and the breaker's cooldown; the attempts
    // before it degrade too, and are owed to the ledger as well)
    await eventually(
      async () => {
        const d = await ask(1);
        if (d.degraded) ids.push(d.decision_id);
        return !d.degraded;
      },
      (ok) => ok,
      POLL,
    );
    // then the buffer is drained right after it
    await eventually(
      async () => (await degradedRows()).length >= ids.length,
      (ok) => ok,
      { ...POLL, timeoutMs: 2_000 },
    );
    expect((await degradedRows()).map((r) => r.payload.id).sort()).toEqual(ids.sort());
    expect(degraded.size).toBe(0);
  });

  it('appends an entry once when its append ran but its reply came after the deadline', async () => {
    // given degraded decisions waiting (recorded as the decision service does when Redis failed), and
    // a Redis that answers
    const { degraded } = await setup({ probeIntervalMs: 600_000, flushTimeoutMs: 300 });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const tenant = uniqueName(`late${i}`);
      const planned = planDecision(
        { selectors: { tenant, principal: 'p', route: open }, cost: 2 },
        {
          policySet: set,
          tokenSecret: 'engine-degraded-secret-0123',
          shards: SHARDS,
          maxCost: 10,
          decisionId: ulid(),
        },
      );
      if (!planned.ok) throw new Error(planned.refusal.message);
      degraded.record(planned.plan, 'backend_timeout');
      ids.push(planned.plan.decisionId);
    }
    // when the flush is sent to a paused Redis (its deadline passes for certain) that then resumes
    // and runs the queued appends: written, but the ledger never heard so
    server.pause();
    try {
      await degraded.flush();
      expect(degraded.size).toBe(4);
    } finally {
      server.resume();
    }
    // (the rows of this test's decisions only: the server holds the earlier tests' too)
    const ours = async () => (await degradedRows()).map((r) => r.payload.id).filter((id) => ids.includes(id));
    await eventually(ours, (found) => found.length >= ids.length, POLL);
    // and the next flush retries them
    await degraded.flush();
    expect(degraded.size).toBe(0);
    // then each is in the outbox once: the retry found the decision's marker and appended nothing
    expect((await ours()).sort()).toEqual(ids.sort());
  });

  it('tries a last flush when the engine closes', async () => {
    const { engine: e, client, degraded, sut } = await setup({ probeIntervalMs: 600_000 });
    const tenant = uniqueName('close');
    await redisGoesAway(e);
    for (let i = 0; i < 3; i++)
      await sut.decide({ selectors: { tenant, principal: 'p', route: open }, cost: 1 });
    expect(degraded.size).toBe(3);

    await server.restart();
    await eventually(
      () => e.health().connection === 'ready',
      (ok) => ok,
      POLL,
    );
    // the breaker's cooldown (200 ms) has passed — time, not an event: a busy machine only makes
    // the wait longer — but no decision and no probe has flushed yet: whatever the engine had sent
    // on its connection is done once a PING behind it is answered
    await sleep(250);
    await client.ping();
    await new Promise((resolve) => setImmediate(resolve));
    expect(degraded.size).toBe(3);
    expect(await degradedRows()).toHaveLength(0);

    // when the module stops
    await e.onModuleDestroy();
    engine = undefined;
    // then the buffer reached the outbox before the connection closed
    expect(degraded.size).toBe(0);
    expect(await degradedRows()).toHaveLength(3);
  });
});
