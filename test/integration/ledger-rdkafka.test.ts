/**
 * The librdkafka producer behind the ledger's producer seam (RdkafkaLedgerProducer), against REAL
 * Kafka and REAL Redis: records produced once each, in order per partition, on the partitions the
 * kafkajs producer picks for the same keys, and the relay (OutboxModule, its producer overridden)
 * draining an outbox through it. node-rdkafka is not a dependency of the tree: it is loaded from
 * .local/rdkafka (scripts/rdkafka-install.sh), and without it this suite is skipped with the reason
 * printed.
 */
import { Test, type TestingModule } from '@nestjs/testing';
import { DecisionService, EngineService, allShardKeys, type Decision } from '@tally/engine';
import {
  createKafka,
  createLedger,
  LEDGER_PRODUCER,
  LedgerModule,
  ledgerTopicSpecs,
  RdkafkaLedgerProducer,
  TOPICS,
  type Ledger,
  type LedgerProducer,
  type RdkafkaNative,
} from '@tally/ledger';
import { ObservabilityModule } from '@tally/observability';
import { OutboxModule } from '@tally/outbox';
import { eventually, PrivateRedis, testEnv, testPolicy, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import type { Kafka } from 'kafkajs';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const RDKAFKA = join(process.cwd(), '.local/rdkafka/node_modules/node-rdkafka');
const installed = existsSync(join(RDKAFKA, 'package.json'));
const POLL = { timeoutMs: 60_000, intervalMs: 100 } as const;
const run = uniqueName('rdk-it');

interface Read {
  readonly key: string;
  readonly value: string;
  readonly partition: number;
}

/** Every record of `topic` (from the start), once the consumer has caught up with its high marks. */
async function readTopic(kafka: Kafka, topic: string, atLeast: number): Promise<Read[]> {
  const records: Read[] = [];
  const next = new Map<number, bigint>();
  const consumer = kafka.consumer({ groupId: uniqueName('rdk-it-reader'), maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: ({ partition, message }) => {
        records.push({ key: String(message.key), value: String(message.value), partition });
        next.set(partition, BigInt(message.offset) + 1n);
        return Promise.resolve();
      },
    });
    await eventually(
      () => records.length,
      (n) => n >= atLeast,
      POLL,
    );
    // The barrier before "and nothing more": every record the topic holds now has been read.
    const admin = kafka.admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    await eventually(
      () => ends.every((p) => (next.get(p.partition) ?? 0n) >= BigInt(p.high)),
      (done) => done,
      POLL,
    );
    return records;
  } finally {
    await consumer.disconnect();
  }
}

/** key → [value, …] in the order read (one partition per key, so that is the partition's order). */
function byKey(records: readonly Read[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of records) out.set(r.key, [...(out.get(r.key) ?? []), r.value]);
  return out;
}

describe.runIf(installed)(RdkafkaLedgerProducer.name, () => {
  // Loaded when the suite runs: its body is still collected, and so evaluated, when it is skipped.
  let native: RdkafkaNative;
  const kafka = createKafka({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'error' });
  let ledger: Ledger;
  const producers: LedgerProducer[] = [];
  const rdkafka = (): RdkafkaLedgerProducer => {
    const p = new RdkafkaLedgerProducer(native, { brokers: testEnv().kafkaBrokers, clientId: run });
    producers.push(p);
    return p;
  };

  beforeAll(() => {
    native = createRequire(__filename)(RDKAFKA) as RdkafkaNative;
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'error' });
  });

  afterAll(async () => {
    await Promise.all(producers.map((p) => p.disconnect()));
    await ledger?.close();
  });

  it('writes every record once, in order per key, on the partition kafkajs picks for that key', async () => {
    // given: two fresh topics of 7 partitions, one per client; 200 keys, 15 records each, in 6 batches
    const topics = { rdkafka: uniqueName('rdk-it-r'), kafkajs: uniqueName('rdk-it-k') };
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: Object.values(topics).map((topic) => ({ topic, numPartitions: 7, replicationFactor: 1 })),
    });
    await admin.disconnect();
    const keys = Array.from({ length: 200 }, (_, i) => `${run}-tenant-${i}`);
    const batches = Array.from({ length: 6 }, (_, b) =>
      Array.from({ length: 500 }, (_, i) => {
        const seq = b * 500 + i;
        return {
          key: keys[seq % keys.length],
          value: `${String(seq).padStart(5, '0')}`,
          headers: { n: '1' },
        };
      }),
    );

    // when: the same batches go through both producers
    const sut = rdkafka();
    for (const messages of batches) await sut.sendBatch([{ topic: topics.rdkafka, messages }]);
    for (const messages of batches) await ledger.producer.sendBatch([{ topic: topics.kafkajs, messages }]);

    // then: each record exactly once, each key's records in the order sent, same partition per key
    const total = batches.length * 500;
    const viaRdkafka = await readTopic(kafka, topics.rdkafka, total);
    const viaKafkajs = await readTopic(kafka, topics.kafkajs, total);
    expect(viaRdkafka.map((r) => r.value).sort()).toEqual(batches.flat().map((m) => m.value));
    const sent = byKey(batches.flat().map((m) => ({ ...m, partition: 0 })));
    expect(byKey(viaRdkafka)).toEqual(sent);
    const partitionOf = (records: readonly Read[]) =>
      new Map(records.map((r) => [r.key, r.partition] as const));
    expect(partitionOf(viaRdkafka)).toEqual(partitionOf(viaKafkajs));
    expect(new Set(viaRdkafka.map((r) => r.partition)).size).toBe(7);
  });

  it('rejects a batch for a topic that does not exist instead of resolving it', async () => {
    // given: a producer whose records cannot be delivered (no such topic, auto-creation off)
    const sut = new RdkafkaLedgerProducer(native, {
      brokers: testEnv().kafkaBrokers,
      clientId: run,
      messageTimeoutMs: 3_000,
    });
    producers.push(sut);

    // when / then: the batch is refused, as kafkajs refuses it, so the relay keeps its copy
    await expect(
      sut.sendBatch([{ topic: uniqueName('rdk-it-missing'), messages: [{ key: 'k', value: 'v' }] }]),
    ).rejects.toThrow(/did not acknowledge every record/);
  });

  describe('as the relay producer', () => {
    let server: PrivateRedis;
    let moduleRef: TestingModule | undefined;

    beforeAll(async () => {
      server = await PrivateRedis.start();
      await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    });

    afterAll(async () => {
      await moduleRef?.close();
      await server?.stop();
    });

    it('drains an outbox: one usage record per decision, in order per tenant', async () => {
      // given: 600 decisions of 20 tenants in the outbox (the engine's own DecisionService)
      const url = server.url;
      const redis = new Redis(url);
      const name = uniqueName('pr');
      const policy = testPolicy(name, {
        windows: [
          { name: 'w', role: 'sustained', algorithm: 'fixed_window', limit: 1e6, periodMs: 3_600_000 },
        ],
        maxCost: 5,
        onBackendFailure: 'fail_closed',
      });
      const engineOptions = {
        redis: { mode: 'single' as const, url },
        shards: 4,
        backendTimeoutMs: 5_000,
        idempotencyTtlMs: 60_000,
        tokenSecret: 'rdk-it-secret-0123456789',
      };
      const source = { current: { version: uniqueName('set'), policies: [policy], loadedAt: 0 } };
      const decide = new DecisionService(new EngineService(redis, engineOptions), source, engineOptions);
      const decisions: Decision[] = [];
      for (let i = 0; i < 600; i++) {
        decisions.push(
          await decide.decide({ selectors: { tenant: `${run}-t${i % 20}`, principal: 'p' }, cost: 1 }),
        );
      }

      // when: a relay whose ledger producer is the librdkafka one drains it
      moduleRef = await Test.createTestingModule({
        imports: [
          ObservabilityModule.forRoot({ app: run, defaultMetrics: false }),
          LedgerModule.forRoot({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'error' }),
          OutboxModule.forRoot({
            redis: { mode: 'single', url },
            shards: 4,
            topicPartitions: 12,
            topicReplication: 1,
            consumerName: uniqueName('relay'),
            blockMs: 200,
          }),
        ],
      })
        .overrideProvider(LEDGER_PRODUCER)
        .useValue(rdkafka())
        .compile();
      await moduleRef.init();

      // then: the outbox empties, and the usage topic holds each decision once, in decision order per tenant
      const outboxes = allShardKeys(4).map((k) => k.outbox);
      await eventually(
        async () => (await Promise.all(outboxes.map((k) => redis.xlen(k)))).reduce((a, b) => a + b, 0),
        (n) => n === 0,
        POLL,
      );
      const usage = (await readTopic(kafka, TOPICS.usage, 600))
        .map((r) => JSON.parse(r.value) as { id: string; data: { tenant: string } })
        .filter((e) => e.data.tenant.startsWith(run));
      expect(usage.map((e) => e.id).sort()).toEqual(decisions.map((d) => d.decision_id).sort());
      for (let t = 0; t < 20; t++) {
        const tenant = `${run}-t${t}`;
        expect(usage.filter((e) => e.data.tenant === tenant).map((e) => e.id)).toEqual(
          decisions.filter((_, i) => i % 20 === t).map((d) => d.decision_id),
        );
      }
      redis.disconnect();
    });
  });
});

it.skipIf(installed)('RdkafkaLedgerProducer: skipped, node-rdkafka is not installed', () => {
  console.log(`ledger-rdkafka: ${RDKAFKA} is missing (scripts/rdkafka-install.sh), the suite is skipped`);
});
