/**
 * Override changes on the ledger and in the audit trail (issue 13), end to end on REAL Redis and
 * REAL Kafka: the engine's OverridesService on a Redis of this suite's own (override-write.lua appends
 * the change to the shard's outbox in its own step), the relay module publishing it to the decision
 * topic, and the projector app in this process folding it. The decision topic's name is fixed, so
 * this run's changes (its tenant is unique) are read back from it and handed to the projector on
 * topics of the run's own (RunTopics), as they were published: the same records, key and value.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { OverridesService, OverridesStore, type EngineOptions } from '@tally/engine';
import { createLedger, LedgerModule, ledgerTopicSpecs, TOPICS, type Ledger } from '@tally/ledger';
import { ObservabilityModule } from '@tally/observability';
import { OutboxModule } from '@tally/outbox';
import {
  eventually,
  PrivateRedis,
  PublishedContracts,
  testEnv,
  testPolicy,
  uniqueName,
} from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessProjector, PROJECTOR_POLL, RunTopics } from './projector.harness';

const SHARDS = 4;

interface Published {
  readonly key: string;
  readonly value: string;
  readonly headers: Record<string, string>;
}

/** This run's records of the decision topic (its tenant only), read from the topic's start. */
async function readChanges(ledger: Ledger, tenant: string, count: number): Promise<Published[]> {
  const consumer = ledger.consumers.create({
    groupId: uniqueName('override-audit-reader'),
    topics: [TOPICS.decision],
    fromBeginning: true,
    autoCommit: false,
  });
  const got: Published[] = [];
  await consumer.run(async (batch) => {
    for (const r of batch.records) {
      const value = r.value?.toString() ?? '';
      if (value.includes(`"tenant":"${tenant}"`))
        got.push({ key: r.key ?? '', value, headers: { ...r.headers } });
    }
    await Promise.resolve();
  });
  try {
    await eventually(
      () => got.length,
      (n) => n >= count,
      { ...PROJECTOR_POLL, what: `${count} override changes of ${tenant}` },
    );
    return got;
  } finally {
    await consumer.disconnect();
  }
}

describe('override changes on the ledger and in the audit trail', () => {
  let server: PrivateRedis;
  let redis: Redis;
  let ledger: Ledger;
  let relay: TestingModule;
  let run: RunTopics;
  let projector: InProcessProjector | undefined;

  beforeAll(async () => {
    server = await PrivateRedis.start();
    redis = new Redis(server.url);
    const brokers = testEnv().kafkaBrokers;
    ledger = createLedger({ brokers, clientId: uniqueName('override-audit'), logLevel: 'error' });
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    const name = uniqueName('relay');
    relay = await Test.createTestingModule({
      imports: [
        ObservabilityModule.forRoot({ app: name, defaultMetrics: false }),
        LedgerModule.forRoot({ brokers, clientId: name, logLevel: 'error' }),
        OutboxModule.forRoot({
          redis: { mode: 'single', url: server.url },
          shards: SHARDS,
          topicPartitions: 12,
          topicReplication: 1,
          consumerName: name,
          blockMs: 200,
        }),
      ],
    }).compile();
    await relay.init();
    run = new RunTopics(brokers, 'override-audit');
    await run.create();
  });

  afterAll(async () => {
    await projector?.stop();
    await relay?.close();
    await run?.close();
    await ledger?.close();
    redis?.disconnect();
    await server?.stop();
  });

  it('publishes set, raise and remove as tally.override.v1 and the audit shows them in order: before, after, who, why', async () => {
    // given a policy keyed by tenant, and the engine's override use cases on our Redis
    const tenant = uniqueName('ov-tenant');
    const policy = testPolicy(uniqueName('ov'), {
      key: ['tenant'],
      windows: [
        { name: 'hourly', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 3_600_000 },
      ],
      maxCost: 10,
    });
    const options = {
      redis: { mode: 'single', url: server.url },
      shards: SHARDS,
      backendTimeoutMs: 5_000,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'override-audit-secret-0123456789',
    } as EngineOptions;
    const source = { current: { version: 'v-ov', policies: [policy], loadedAt: 0 } };
    const sut = new OverridesService(new OverridesStore(redis, options), source, options);
    const address = { policy: policy.name, key: tenant };

    // when an operator sets 200, raises it to 500 until tomorrow, and another removes it
    const set = await sut.put(address, { limits: { hourly: 200 }, reason: 'pilot' }, 'ops');
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const raise = await sut.put(
      address,
      { limits: { hourly: 500 }, reason: 'launch', expires_at: expiresAt },
      'ops',
    );
    const removed = await sut.remove(address, 'oncall');
    // and a removal of nothing, which is no change and no event
    expect(await sut.remove(address, 'oncall')).toEqual({ ok: false, kind: 'not_found' });
    if (!set.ok || !raise.ok || !removed.ok) throw new Error('override change refused');

    // then three events, on the decision topic, keyed by the tenant, that conform to docs/contracts/
    const records = await readChanges(ledger, tenant, 3);
    const contracts = new PublishedContracts();
    expect(records.flatMap((r) => contracts.eventProblems(r.value, r.headers))).toEqual([]);
    expect(records.map((r) => r.key)).toEqual([tenant, tenant, tenant]);
    const events = records.map((r) => JSON.parse(r.value) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => [e.type, e.data.action, e.data.version])).toEqual([
      ['tally.override.v1', 'set', set.value.version],
      ['tally.override.v1', 'set', raise.value.version],
      ['tally.override.v1', 'remove', removed.value.version],
    ]);

    // when the projector folds them (the same records, on the run's own decision topic)
    await ledger.producer.sendBatch([
      {
        topic: run.topics.decision,
        messages: records.map(({ key, value, headers }) => ({ key, value, headers })),
      },
    ]);
    projector = await InProcessProjector.start(server.url, testEnv().kafkaBrokers, run.overrides);

    // then GET /v1/audit?type=override shows the three changes in order, before/after, who and why
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const page = await eventually(
      () =>
        projector!.get<{ entries: Record<string, unknown>[] }>(
          `/v1/audit?tenant=${tenant}&type=override&since=${since}`,
        ),
      (res) => res.status === 200 && res.body.entries.length >= 3,
      { ...PROJECTOR_POLL, what: 'three override rows in the audit trail' },
    );
    const state = (version: number, limit: number, reason: string, expires?: string) => ({
      version,
      limits: { hourly: limit },
      ...(expires === undefined ? {} : { expires_at: expires }),
      reason,
      set_by: 'ops',
      updated_at: expect.any(String) as unknown,
    });
    const v = [set.value.version, raise.value.version, removed.value.version];
    expect(page.body.entries).toEqual([
      {
        time: expect.any(String) as unknown,
        type: 'override',
        policy: policy.name,
        reason: 'pilot',
        count: 1,
        selectors: {},
        override: {
          action: 'set',
          key: tenant,
          version: v[0],
          set_by: 'ops',
          after: state(v[0], 200, 'pilot'),
        },
      },
      {
        time: expect.any(String) as unknown,
        type: 'override',
        policy: policy.name,
        reason: 'launch',
        count: 1,
        selectors: {},
        override: {
          action: 'set',
          key: tenant,
          version: v[1],
          set_by: 'ops',
          before: state(v[0], 200, 'pilot'),
          after: state(v[1], 500, 'launch', expiresAt),
        },
      },
      {
        time: expect.any(String) as unknown,
        type: 'override',
        policy: policy.name,
        reason: '',
        count: 1,
        selectors: {},
        override: {
          action: 'remove',
          key: tenant,
          version: v[2],
          set_by: 'oncall',
          before: state(v[1], 500, 'launch', expiresAt),
        },
      },
    ]);
    // and the filter keeps other rows out; an unknown type is a 400 naming the field
    const bad = await projector.get<{ code: string }>(`/v1/audit?tenant=${tenant}&type=nope`);
    expect(bad.status).toBe(400);
  });
});
