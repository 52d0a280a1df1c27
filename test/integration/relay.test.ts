/**
 * The outbox relay (@tally/outbox) in this process against REAL Redis and REAL Kafka. Real: a
 * redis-server of this suite's own (the shared Redis holds other engineers' outbox streams, whose key
 * names are fixed by the engine, and their relays would drain ours), the shared Kafka broker, the
 * engine's DecisionService writing the entries, the Nest module wiring of the relay. Topic names are
 * fixed (tally.usage.v1 / tally.decision.v2, and tally.decision.v1, which it must no longer write), so
 * events are read from the offsets recorded before the suite and kept only when their tenant carries
 * this run's unique prefix.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import {
  DecisionService,
  EngineService,
  LeaseService,
  OverridesStore,
  allShardKeys,
  shardOf,
  type Decision,
  type EngineOptions,
} from '@tally/engine';
import {
  createLedger,
  LedgerModule,
  ledgerTopicSpecs,
  TOPICS,
  type Ledger,
  type LedgerConsumer,
} from '@tally/ledger';
import { METRICS_REGISTRY, ObservabilityModule } from '@tally/observability';
import { OutboxModule, OutboxRelay, type RelayOptions } from '@tally/outbox';
import type { Policy } from '@tally/policy';
import {
  eventually,
  PrivateRedis,
  PublishedContracts,
  testEnv,
  testPolicy,
  uniqueName,
} from '@tally/testing';
import { CloudEvent, Kafka as CloudEventsKafka, type KafkaMessage } from 'cloudevents';
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

const SHARDS = 4;
const run = uniqueName('relay-it');

interface Seen {
  readonly topic: string;
  readonly id: string;
  readonly tenant?: string;
  readonly outcome?: string;
  readonly count?: number;
}

/** Every topic a relay of either contract writes events to. */
const LEDGER_TOPICS = [TOPICS.usage, TOPICS.decision, TOPICS.decisionV1, TOPICS.lease];

/** The relay publishes within a poll or two; Kafka group joins on the shared broker take seconds. */
const POLL = { timeoutMs: 30_000, intervalMs: 100 } as const;

/** One record as read, for the contract checks. */
interface RawRecord {
  readonly topic: string;
  readonly key: string;
  readonly value: string;
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * Everything published to the ledger topics from now on whose tenant belongs to this run; each
 * record checked against the published JSON Schema documents as it is read.
 */
class Collector {
  readonly seen: Seen[] = [];
  readonly records: RawRecord[] = [];
  /** Records that do not conform to docs/contracts/ (asserted empty). */
  readonly violations: string[] = [];
  private readonly contracts = new PublishedContracts();
  /** `topic/partition` → the next offset this collector will read. */
  private readonly next = new Map<string, bigint>();
  private constructor(private readonly consumer: LedgerConsumer) {}

  static async start(ledger: Ledger): Promise<Collector> {
    const topics = LEDGER_TOPICS;
    const high = new Map<string, string>();
    for (const topic of topics) {
      // Right after creation a partition may have no leader yet: ask again until it has one.
      const offsets = await eventually(
        () => ledger.admin.fetchTopicOffsets(topic).catch(() => undefined),
        (o) => o !== undefined,
        POLL,
      );
      for (const p of offsets ?? []) high.set(`${topic}/${p.partition}`, p.high);
    }
    const consumer = ledger.consumers.create({
      groupId: uniqueName('relay-it-collector'),
      topics,
      fromBeginning: true,
      maxWaitTimeMs: 200,
    });
    const collector = new Collector(consumer);
    for (const [partition, offset] of high) collector.next.set(partition, BigInt(offset));
    // Skip what was there before the suite; the tenant filter below makes a late seek harmless.
    consumer.onAssigned((assignment) => {
      for (const [topic, partitions] of Object.entries(assignment)) {
        for (const p of partitions) consumer.seek(topic, p, high.get(`${topic}/${p}`) ?? '0');
      }
    });
    await consumer.run(async (batch) => {
      for (const record of batch.records) {
        const event = JSON.parse(String(record.value)) as {
          id: string;
          data: { tenant?: string; outcome?: string; count?: number };
        };
        if (!event.data.tenant?.startsWith(run)) continue;
        const value = String(record.value);
        collector.violations.push(...collector.contracts.eventProblems(value, record.headers));
        collector.records.push({ topic: batch.topic, key: record.key ?? '', value, headers: record.headers });
        collector.seen.push({
          topic: batch.topic,
          id: event.id,
          tenant: event.data.tenant,
          outcome: event.data.outcome,
          count: event.data.count,
        });
      }
      const last = batch.records.at(-1);
      if (last) collector.next.set(`${batch.topic}/${batch.partition}`, BigInt(last.offset) + 1n);
      return Promise.resolve();
    });
    return collector;
  }

  /**
   * The barrier before "and nothing more": resolves once this collector has read every record the
   * ledger topics hold now. Whatever the relay published before (a duplicate included) is below
   * today's high watermarks, so after this a count is final — no sleeping and hoping.
   */
  async caughtUp(ledger: Ledger): Promise<void> {
    const ends = await Promise.all(
      LEDGER_TOPICS.map(async (topic) =>
        (await ledger.admin.fetchTopicOffsets(topic)).map((p) => ({
          key: `${topic}/${p.partition}`,
          high: BigInt(p.high),
        })),
      ),
    );
    await eventually(
      () => ends.flat().every(({ key, high }) => (this.next.get(key) ?? 0n) >= high),
      (done) => done,
      POLL,
    );
  }

  ids(topic: string, tenantPrefix = run): string[] {
    return this.seen.filter((s) => s.topic === topic && s.tenant?.startsWith(tenantPrefix)).map((s) => s.id);
  }

  stop(): Promise<void> {
    return this.consumer.disconnect();
  }
}

function policy(name: string, limit: number): Policy {
  return testPolicy(name, {
    windows: [{ name: 'w', role: 'sustained', algorithm: 'fixed_window', limit, periodMs: 3_600_000 }],
    maxCost: 5,
    onBackendFailure: 'fail_closed',
  });
}

/** The engine's own DecisionService on our Redis: the entries are exactly what production writes. */
function decider(url: string, policies: Policy[], scriptNow?: () => number) {
  const { engine, source, options, redis } = engineOn(url, policies, scriptNow);
  const service = new DecisionService(engine, source, options);
  const leases = new LeaseService(engine, source);
  return {
    decide: (r: Parameters<DecisionService['decide']>[0]) => service.decide(r),
    release: (id: string) => leases.release(id, null),
    close: () => redis.quit(),
  };
}

function engineOn(url: string, policies: Policy[], scriptNow?: () => number) {
  const redis = new Redis(url, { enableAutoPipelining: false });
  const options: EngineOptions = {
    redis: { mode: 'single', url },
    shards: SHARDS,
    backendTimeoutMs: 5_000,
    idempotencyTtlMs: 60_000,
    tokenSecret: 'relay-it-secret-0123456789',
    ...(scriptNow ? { scriptNow } : {}),
  };
  const source = { current: { version: uniqueName('set'), policies, loadedAt: 0 } };
  return { engine: new EngineService(redis, options), source, options, redis };
}

/** Relays still running; closed after each test, so a failed test never leaves one draining the next. */
const running = new Set<TestingModule>();

async function stopRelay(moduleRef: TestingModule): Promise<void> {
  running.delete(moduleRef);
  await moduleRef.close();
}

async function startRelay(url: string, over: Partial<RelayOptions> = {}): Promise<TestingModule> {
  const name = over.consumerName ?? uniqueName('relay');
  const moduleRef = await Test.createTestingModule({
    imports: [
      ObservabilityModule.forRoot({ app: name, defaultMetrics: false }),
      LedgerModule.forRoot({ brokers: testEnv().kafkaBrokers, clientId: name, logLevel: 'error' }),
      OutboxModule.forRoot({
        redis: { mode: 'single', url },
        shards: SHARDS,
        topicPartitions: 12,
        topicReplication: 1,
        consumerName: name,
        blockMs: 200,
        claimMinIdleMs: 2_000,
        claimIntervalMs: 500,
        denialIntervalMs: 200,
        ...over,
      }),
    ],
  }).compile();
  running.add(moduleRef);
  await moduleRef.init();
  return moduleRef;
}

async function metric(moduleRef: TestingModule, name: string, labels = ''): Promise<number> {
  const text = await moduleRef.get<Registry>(METRICS_REGISTRY).metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

function countById(ids: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe(OutboxRelay.name, () => {
  let server: PrivateRedis;
  let url: string;
  let redis: Redis;
  let ledger: Ledger;
  let collector: Collector;
  const outboxes = allShardKeys(SHARDS).map((k) => k.outbox);

  const outboxLength = async (): Promise<number> =>
    (await Promise.all(outboxes.map((k) => redis.xlen(k)))).reduce((a, b) => a + b, 0);
  const pending = async (): Promise<number> => {
    let total = 0;
    for (const key of outboxes) {
      const summary = (await redis.call('XPENDING', key, 'tally-relay').catch(() => [0])) as [number];
      total += Number(summary[0]);
    }
    return total;
  };

  beforeAll(async () => {
    server = await PrivateRedis.start();
    url = server.url;
    redis = new Redis(url);
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'error' });
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    collector = await Collector.start(ledger);
  });

  afterEach(async () => {
    await Promise.all([...running].map(stopRelay));
  });

  afterAll(async () => {
    await collector?.stop();
    await ledger?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('publishes every entry exactly once, including those written before any relay ran', async () => {
    // given: decisions of 10 tenants (cost 0..3), half of them before the relay exists
    const tenants = `${run}-a`;
    const engine = decider(url, [policy(uniqueName('pa'), 1_000_000)]);
    const decisions: Decision[] = [];
    const write = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const selectors = { tenant: `${tenants}-${i % 10}`, principal: `p${i % 3}` };
        decisions.push(await engine.decide({ selectors, cost: i % 4 }));
      }
    };
    await write(200);
    expect(await outboxLength()).toBe(150);

    // when: a relay starts, and more decisions arrive while it runs
    const sut = await startRelay(url);
    await write(200);

    // then: every decision with a cost has exactly one record, its usage event, nothing twice and
    // nothing on a decision topic (cost 0 is a peek: nothing is written, so there is no event)
    const usageIds = decisions.filter((_, i) => i % 4 !== 0).map((d) => d.decision_id);
    await eventually(
      () => collector.ids(TOPICS.usage, tenants).length,
      (n) => n >= 300,
      POLL,
    );
    await eventually(outboxLength, (n) => n === 0, POLL);
    expect(await pending()).toBe(0);
    await collector.caughtUp(ledger); // a duplicate would be in by now
    const usageCounts = countById(collector.ids(TOPICS.usage, tenants));
    expect(new Set(usageCounts.keys())).toEqual(new Set(usageIds));
    expect([...usageCounts.values()].every((n) => n === 1)).toBe(true);
    expect(collector.ids(TOPICS.decision, tenants)).toEqual([]);
    expect(collector.ids(TOPICS.decisionV1, tenants)).toEqual([]);
    expect(await metric(sut, 'tally_relay_events_published_total', `topic="${TOPICS.usage}"`)).toBe(300);
    expect(await metric(sut, 'tally_relay_events_published_total', `topic="${TOPICS.decision}"`)).toBe(0);
    expect(await metric(sut, 'tally_outbox_length')).toBe(0);
    await stopRelay(sut);
    await engine.close();
  });

  it('two relays share the streams and together publish everything once', async () => {
    // given: two relays on the same streams (their consumers are the group's newcomers)
    const tenants = `${run}-b`;
    const stream = allShardKeys(SHARDS)[shardOf(`${tenants}-0`, SHARDS)].outbox;
    const consumersOf = async (key: string): Promise<string[]> => {
      const rows = (await redis
        .call('XINFO', 'CONSUMERS', key, 'tally-relay')
        .catch(() => [])) as unknown[][];
      return rows.map((row) => String(row[1]));
    };
    const before = await consumersOf(stream);
    // Small batches: with the default 1000, on a busy machine the decisions pile up while the
    // relays wait for a CPU, and the first read takes them all (seen beside a CPU hog).
    const [first, second] = await Promise.all([
      startRelay(url, { batchSize: 20 }),
      startRelay(url, { batchSize: 20 }),
    ]);
    const engine = decider(url, [policy(uniqueName('pb'), 1_000_000)]);

    // when: 1000 decisions arrive, 20 at a time
    const ids: string[] = [];
    for (let i = 0; i < 1000; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, j) =>
          engine.decide({ selectors: { tenant: `${tenants}-${(i + j) % 16}`, principal: 'p' }, cost: 1 }),
        ),
      );
      ids.push(...batch.map((d) => d.decision_id));
    }

    // then: both read the streams as members of one group, and together published all of them, each
    // once. How the 1000 split between them is the scheduler's business: on a busy machine one relay
    // can take every batch, so the split is not asserted — the group membership and the sum are.
    await eventually(
      () => collector.ids(TOPICS.usage, tenants).length,
      (n) => n >= 1000,
      POLL,
    );
    await eventually(outboxLength, (n) => n === 0, POLL);
    const joined = (await consumersOf(stream)).filter((name) => !before.includes(name));
    expect(joined).toHaveLength(2);
    const published = await Promise.all(
      [first, second].map((m) => metric(m, 'tally_relay_events_published_total', `topic="${TOPICS.usage}"`)),
    );
    expect(published[0] + published[1]).toBe(1000);
    const counts = countById(collector.ids(TOPICS.usage, tenants));
    expect(new Set(counts.keys())).toEqual(new Set(ids));
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    await Promise.all([stopRelay(first), stopRelay(second)]);
    await engine.close();
  });

  it('re-claims the entries a vanished relay left pending and publishes them', async () => {
    // given: entries delivered to a consumer that never acknowledges (a relay that died mid-batch)
    const tenant = `${run}-c`;
    const engine = decider(url, [policy(uniqueName('pc'), 1_000_000)]);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      ids.push((await engine.decide({ selectors: { tenant, principal: 'p' }, cost: 2 })).decision_id);
    }
    const shard = allShardKeys(SHARDS)[shardOf(tenant, SHARDS)].outbox;
    await redis.call('XGROUP', 'CREATE', shard, 'tally-relay', '0', 'MKSTREAM').catch(() => undefined);
    await redis.call('XREADGROUP', 'GROUP', 'tally-relay', 'dead-relay', 'COUNT', 100, 'STREAMS', shard, '>');
    expect(await pending()).toBe(30);

    // when: a relay runs (min idle 2 s)
    const sut = await startRelay(url);

    // then: after the idle time they are taken over, published once and deleted
    await eventually(
      () => collector.ids(TOPICS.usage, tenant).length,
      (n) => n >= 30,
      POLL,
    );
    await eventually(pending, (n) => n === 0, POLL);
    expect(new Set(collector.ids(TOPICS.usage, tenant))).toEqual(new Set(ids));
    expect(await metric(sut, 'tally_relay_reclaimed_total')).toBe(30);
    expect(await outboxLength()).toBe(0);
    await stopRelay(sut);
    await engine.close();
  });

  it('coalesces 50 denials of one key within a second into one tally.decision.v2 event with count 50', async () => {
    // given: a limit of 1, and 51 decisions within one closed second (a fixed script time in the past)
    const tenant = `${run}-d`;
    const second = Math.floor(Date.now() / 1000) - 5;
    const engine = decider(url, [policy(uniqueName('pd'), 1)], () => second * 1000 + 250);
    const decisions: Decision[] = [];
    for (let i = 0; i < 51; i++)
      decisions.push(await engine.decide({ selectors: { tenant, principal: 'p' }, cost: 1 }));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(1);
    const denials = allShardKeys(SHARDS)[shardOf(tenant, SHARDS)].denials;
    expect(await redis.hlen(denials)).toBe(3);

    // when: a relay drains the denial hashes
    const sut = await startRelay(url);

    // then: one denial record counting 50, and the usage record of the one allowed decision; the hash is empty
    const denied = await eventually(
      () => collector.seen.filter((s) => s.tenant === tenant && s.outcome === 'denied'),
      (list) => list.length >= 1,
      POLL,
    );
    await eventually(
      () => redis.hlen(denials),
      (n) => n === 0,
      POLL,
    );
    // a second drain must not add anything: the hash is empty, and the drain that emptied it
    // published before deleting, as the relay did the allowed decision before emptying the
    // outbox: all of it is below the watermarks
    await eventually(outboxLength, (n) => n === 0, POLL);
    await collector.caughtUp(ledger);
    expect(collector.seen.filter((s) => s.tenant === tenant && s.outcome === 'denied')).toEqual([denied[0]]);
    expect(denied[0]).toMatchObject({ topic: TOPICS.decision, count: 50 });
    expect(collector.ids(TOPICS.decision, tenant)).toEqual([denied[0].id]);
    expect(collector.ids(TOPICS.usage, tenant)).toEqual([decisions.find((d) => d.allowed)?.decision_id]);
    expect(await metric(sut, 'tally_relay_denials_drained_total')).toBe(50);
    expect(await redis.get(allShardKeys(SHARDS)[shardOf(tenant, SHARDS)].denialLease)).toBe(
      sut.get(OutboxRelay).consumerName,
    );
    await stopRelay(sut);
    // a graceful stop hands the leases back
    expect(await redis.get(allShardKeys(SHARDS)[shardOf(tenant, SHARDS)].denialLease)).toBeNull();
    await engine.close();
  });

  it('lingers: decisions arriving together leave in one produce request, not one per read', async () => {
    // given: an idle relay (blocked in XREADGROUP) that lingers 1 s after a batch's first entry
    const tenants = `${run}-linger`;
    const sut = await startRelay(url, { lingerMs: 1_000 });
    const engine = decider(url, [policy(uniqueName('pl'), 1_000_000)]);
    await eventually(
      () => metric(sut, 'tally_relay_produce_requests_total'),
      (n) => n === 0,
      POLL,
    );

    // when: 40 decisions of 8 tenants (several shards) arrive, one after another
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      ids.push(
        (await engine.decide({ selectors: { tenant: `${tenants}-${i % 8}`, principal: 'p' }, cost: 1 }))
          .decision_id,
      );
    }

    // then: all of them are published, in at most two requests (a machine slow enough to spread
    // the 40 writes over more than the linger closes a first batch early), never one per decision
    await eventually(
      () => collector.ids(TOPICS.usage, tenants).length,
      (n) => n >= 40,
      POLL,
    );
    expect(new Set(collector.ids(TOPICS.usage, tenants))).toEqual(new Set(ids));
    const requests = await metric(sut, 'tally_relay_produce_requests_total');
    expect(requests).toBeGreaterThanOrEqual(1);
    expect(requests).toBeLessThanOrEqual(2);
    await eventually(outboxLength, (n) => n === 0, POLL);
    await stopRelay(sut);
    await engine.close();
  });

  it('costs Redis nothing per shard while idle: no XAUTOCLAIM, no denial lease, no HSCAN', async () => {
    // given: a relay with nothing to do (empty outbox, no denials), claim and drain intervals short
    const sut = await startRelay(url, { claimIntervalMs: 100, denialIntervalMs: 100 });
    await eventually(outboxLength, (n) => n === 0, POLL);
    await redis.config('RESETSTAT');

    // when: it idles for ten of each interval
    const commands = async (): Promise<Record<string, number>> => {
      const info = await redis.info('commandstats');
      return Object.fromEntries(
        [...info.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)].map((m) => [m[1], Number(m[2])]),
      );
    };
    const seen = await eventually(
      commands,
      (c) => (c.xpending ?? 0) >= 10 * SHARDS && (c.exists ?? 0) >= 10,
      POLL,
    );

    // then: it only asked (XPENDING summaries, one EXISTS over the denial hashes): nothing was
    // claimed, no lease taken or renewed, no hash scanned
    expect(seen.xautoclaim ?? 0).toBe(0);
    expect(seen.set ?? 0).toBe(0);
    expect(seen.pexpire ?? 0).toBe(0);
    expect(seen.hscan ?? 0).toBe(0);
    await stopRelay(sut);
  });

  it('publishes a release as one tally.lease.v1 event, and usage counts the acquisition only', async () => {
    // given: a lease taken under a concurrency window, released twice (the second is a no-op)
    const tenant = `${run}-lease`;
    const name = uniqueName('pl');
    const engine = decider(url, [
      testPolicy(name, {
        key: ['tenant'],
        windows: [{ name: 'inflight', role: 'burst', algorithm: 'concurrency', limit: 2, periodMs: 60_000 }],
        maxCost: 2,
      }),
    ]);
    const acquired = await engine.decide({ selectors: { tenant }, cost: 2 });
    expect(acquired.lease).toBeDefined();
    expect(await engine.release(acquired.lease?.id ?? '')).toMatchObject({ outcome: 'released' });
    expect(await engine.release(acquired.lease?.id ?? '')).toMatchObject({ outcome: 'already_released' });

    // when: a relay runs
    const sut = await startRelay(url);

    // then: one usage event (the acquisition), one lease event (the release)
    await eventually(
      () => collector.ids(TOPICS.lease, tenant).length,
      (n) => n >= 1,
      POLL,
    );
    await eventually(outboxLength, (n) => n === 0, POLL);
    await collector.caughtUp(ledger);
    expect(collector.ids(TOPICS.usage, tenant)).toEqual([acquired.decision_id]);
    expect(collector.ids(TOPICS.decision, tenant)).toEqual([]);
    expect(collector.ids(TOPICS.lease, tenant)).toEqual([acquired.decision_id]);
    const record = collector.records.find((r) => r.topic === TOPICS.lease && r.value.includes(tenant));
    expect(record?.key).toBe(tenant);
    expect(JSON.parse(record?.value ?? '{}')).toMatchObject({
      type: 'tally.lease.v1',
      id: acquired.decision_id,
      subject: `${name}/${tenant}`,
      data: {
        lease_id: acquired.lease?.id,
        decision_id: acquired.decision_id,
        tenant,
        units: 2,
        outcome: 'released',
        windows: [{ policy: name, window: 'inflight', key: tenant, limit: 2 }],
      },
    });
    expect(await metric(sut, 'tally_relay_events_published_total', `topic="${TOPICS.lease}"`)).toBe(1);
    await stopRelay(sut);
    await engine.close();
  });

  it('carries the override in force into the events: its version and limits, and a block as reason blocked', async () => {
    // given: a limit of 5 raised to 7 by an override, then blocked by a newer one (script time in a
    // closed second, so the block's coalesced denial is drained at once)
    const tenant = `${run}-o`;
    const name = uniqueName('po');
    const second = Math.floor(Date.now() / 1000) - 5;
    const engine = decider(
      url,
      [policy(name, 5)].map((p) => ({ ...p, key: ['tenant'] as const })),
      () => second * 1000 + 250,
    );
    const overridesRedis = new Redis(url);
    const overrides = new OverridesStore(overridesRedis, {
      redis: { mode: 'single', url },
      shards: SHARDS,
    } as EngineOptions);
    const target = { policy: name, key: tenant, tenant };
    const raise = await overrides.set(target, {
      limits: { w: 7 },
      expiresAtMs: null,
      reason: 'launch',
      setBy: 'ops',
    });
    const allowed = await engine.decide({ selectors: { tenant }, cost: 1 });
    const block = await overrides.set(target, {
      limits: { w: 0 },
      expiresAtMs: null,
      reason: 'abuse',
      setBy: 'ops',
    });
    expect(await engine.decide({ selectors: { tenant }, cost: 1 })).toMatchObject({ reason: 'blocked' });

    // when: a relay publishes the outbox and drains the denials
    const sut = await startRelay(url);

    // then: the usage event names the raise, the denial event the block
    type Data = {
      outcome: string;
      reason?: string;
      policies: { override_version?: number; windows: { limit: number; override_limit?: number }[] }[];
    };
    const events = await eventually(
      () =>
        collector.records
          .filter((r) => r.value.includes(`"tenant":"${tenant}"`))
          .map((r) => ({ topic: r.topic, data: (JSON.parse(r.value) as { data: Data }).data })),
      (list) => list.some((e) => e.topic === TOPICS.usage) && list.some((e) => e.data.outcome === 'denied'),
      POLL,
    );
    const usage = events.find((e) => e.topic === TOPICS.usage);
    expect(usage?.data.policies[0]).toMatchObject({
      override_version: raise.version,
      windows: [{ limit: 5, override_limit: 7 }],
    });
    expect(allowed.policies[0].override).toEqual({ version: raise.version });
    const denied = events.find((e) => e.data.outcome === 'denied');
    expect(denied?.data).toMatchObject({
      reason: 'blocked',
      policies: [{ override_version: block.version, windows: [{ override_limit: 0 }] }],
    });
    await stopRelay(sut);
    await engine.close();
    await overridesRedis.quit();
  });

  // Runs last: it reads back what the tests above published (usage events, coalesced denials,
  // releases, override changes), so every kind of event the relay writes is checked.
  it('publishes only events that conform to docs/contracts/ and that the CloudEvents SDK parses alike', () => {
    const kinds = new Set(
      collector.records.map((r) => {
        const event = JSON.parse(r.value) as { type: string; data: { outcome: string } };
        return `${event.type}/${event.data.outcome}`;
      }),
    );
    expect(kinds).toEqual(
      new Set([
        'tally.usage.v1/allowed',
        'tally.decision.v2/denied',
        'tally.lease.v1/released',
        // the override changes of the override test above (no outcome: not a decision)
        'tally.override.v1/undefined',
      ]),
    );
    expect(collector.violations).toEqual([]);
    for (const record of collector.records) {
      const ours = JSON.parse(record.value) as Record<string, unknown>;
      // The official SDK, structured mode: it picks the mode from the content-type header.
      const message: KafkaMessage<string> = {
        key: record.key,
        value: record.value,
        headers: record.headers,
        body: record.value,
      };
      const parsed = CloudEventsKafka.toEvent<unknown>(message);
      const event = Array.isArray(parsed) ? parsed[0] : parsed;
      expect(event).toBeInstanceOf(CloudEvent);
      if (!(event instanceof CloudEvent)) continue;
      expect(event.validate()).toBe(true);
      expect({
        specversion: event.specversion,
        id: event.id,
        type: event.type,
        source: event.source,
        time: event.time,
        subject: event.subject,
        datacontenttype: event.datacontenttype,
        data: event.data,
      }).toEqual({
        specversion: '1.0',
        id: ours.id,
        type: ours.type,
        source: ours.source,
        time: ours.time,
        subject: ours.subject,
        datacontenttype: 'application/json',
        data: ours.data,
      });
      expect(event.partitionkey).toBe(record.key);
    }
  });
});
