/**
 * The same timed-out-but-committed decision as degraded-twins.test.ts, end to end: REAL Redis for the
 * engine and its outbox (a PrivateRedis paused with SIGSTOP), the relay module publishing to REAL
 * Kafka (the shared broker, the ledger topics), the projector app in this process on a Redis of its
 * own, read through GET /v1/usage. The degraded ledger's clock is an hour ahead of Redis's, so the
 * `allowed` and `degraded` copies of the decision fall in different UTC hours.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { DecisionService, DegradedLedger, EngineService, type EngineOptions } from '@tally/engine';
import { LedgerModule, TOPICS } from '@tally/ledger';
import { ObservabilityModule } from '@tally/observability';
import { OutboxModule } from '@tally/outbox';
import type { PolicySet } from '@tally/policy';
import { createRedisClient } from '@tally/redis';
import { eventually, PrivateRedis, testEnv, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';
import { InProcessProjector, PROJECTOR_POLL } from './projector.harness';

const SHARDS = 4;
const H = 3_600_000;

interface UsageBody {
  total: { cost: number; count: number };
}

describe('a timed-out decision that committed, through the relay, Kafka and the projector', () => {
  let engineRedis: PrivateRedis;
  let projectionRedis: PrivateRedis;
  let relay: TestingModule | undefined;
  let projector: InProcessProjector | undefined;
  let engine: EngineService | undefined;

  beforeAll(async () => {
    [engineRedis, projectionRedis] = await Promise.all([PrivateRedis.start(), PrivateRedis.start()]);
  });

  afterAll(async () => {
    await engine?.onModuleDestroy();
    await relay?.close();
    await projector?.stop();
    await Promise.all([engineRedis?.stop(), projectionRedis?.stop()]);
  });

  it('is projected once, though its copies are an hour apart', async () => {
    // given the engine, its degraded ledger (clock an hour ahead), a relay and a projector
    const open = uniqueName('open');
    const set: PolicySet = {
      version: 'twins-kafka',
      policies: [backendFailurePolicy(open, 'fail_open')],
      loadedAt: 0,
    };
    const options: EngineOptions = {
      redis: { mode: 'single', url: engineRedis.url },
      shards: SHARDS,
      backendTimeoutMs: 150,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'degraded-twins-kafka-0123',
      breaker: { failureThreshold: 100, cooldownMs: 200 },
      // no probe: the test flushes when the committed copy is projected, so the copies meet in two
      // steps (in one, the step's own dedup would catch them whatever their hours)
      degradedLedger: { probeIntervalMs: 600_000 },
    };
    engine = new EngineService(createRedisClient(options.redis, 'hot-path'), options);
    await engine.onModuleInit();
    const degraded = new DegradedLedger(engine, { ...options, clock: () => Date.now() + H });
    const sut = new DecisionService(engine, { current: set }, options, undefined, degraded);
    const tenant = uniqueName('t');
    const ask = (cost: number) => sut.decide({ selectors: { tenant, principal: 'p', route: open }, cost });
    const name = uniqueName('relay');
    relay = await Test.createTestingModule({
      imports: [
        ObservabilityModule.forRoot({ app: name, defaultMetrics: false }),
        LedgerModule.forRoot({ brokers: testEnv().kafkaBrokers, clientId: name, logLevel: 'error' }),
        OutboxModule.forRoot({
          redis: { mode: 'single', url: engineRedis.url },
          shards: SHARDS,
          topicPartitions: 12,
          topicReplication: 1,
          consumerName: name,
          blockMs: 200,
        }),
      ],
    }).compile();
    await relay.init();
    const run = uniqueName('twins');
    const projecting = (projector = await InProcessProjector.start(
      projectionRedis.url,
      testEnv().kafkaBrokers,
      {
        groupId: `${run}-group`,
        topics: {
          usage: TOPICS.usage,
          decision: TOPICS.decision,
          decisionV1: TOPICS.decisionV1,
          deadLetter: `${run}.dlq`,
        },
        lagPollMs: 1_000,
      },
    ));

    // when a decision times out at the API (Redis paused) and degrades; on resume the script commits
    engineRedis.pause();
    const twin = await ask(3).finally(() => engineRedis.resume());
    expect(twin).toMatchObject({ allowed: true, degraded: true, degraded_cause: 'backend_timeout' });
    // and the committed copy is projected (the relay published it, the projector applied it)
    const hours = (ms: number) => new Date(Math.floor(ms / H) * H).toISOString().replace('.000Z', 'Z');
    const range = `granularity=hour&from=${hours(Date.now() - 2 * H)}&to=${hours(Date.now() + 3 * H)}`;
    const usageOf = () => projecting.get<UsageBody>(`/v1/usage?tenant=${tenant}&${range}`);
    const first = await eventually(
      usageOf,
      (res) => res.status === 200 && res.body.total.count >= 1,
      PROJECTOR_POLL,
    );
    expect(first.body.total).toEqual({ cost: 3, count: 1 });
    // and only then the degraded ledger appends its copy, behind the committed one in the shard stream
    expect(degraded.size).toBe(1);
    await degraded.flush();
    expect(degraded.size).toBe(0);
    // and a later decision of the same tenant: same stream and partition, behind both copies
    expect(await ask(1)).toMatchObject({ allowed: true, degraded: false });

    // then once the later one is projected, so is everything before it: the twins counted once
    const usage = await eventually(
      usageOf,
      (res) => res.status === 200 && res.body.total.count >= 2,
      PROJECTOR_POLL,
    );
    expect(usage.body.total).toEqual({ cost: 4, count: 2 });
  });
});
