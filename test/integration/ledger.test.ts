/**
 * The ledger ports against the REAL broker (from the global setup): provisioning, the idempotent
 * producer, a batch consumer in a group with manual commits, and the operator views of offsets.
 * Every topic and group name carries this run's id, so parallel runs on one broker never meet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger, Ledger, LedgerConsumer, LedgerRecord, TopicSpec } from '@tally/ledger';
import { eventually, testEnv, uniqueName } from '@tally/testing';

const run = uniqueName('it-ledger');
const topicsMade: string[] = [];
let ledger: Ledger;

/** Group state and commits on the shared broker settle within seconds. */
const POLL = { timeoutMs: 30_000, intervalMs: 200 } as const;

function specs(...names: string[]): TopicSpec[] {
  topicsMade.push(...names.filter((n) => !topicsMade.includes(n)));
  return names.map((topic) => ({
    topic,
    partitions: 3,
    replicationFactor: 1,
    configs: { 'retention.ms': '-1' },
  }));
}

beforeAll(() => {
  ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'error' });
});

afterAll(async () => {
  await ledger.admin.deleteTopics(topicsMade).catch(() => undefined);
  await ledger.close();
});

describe('TopicProvisioner (real Kafka)', () => {
  it('creates missing topics once; a second call is a no-op', async () => {
    const wanted = specs(`${run}.usage`, `${run}.decision`, `${run}.dlq`);

    const first = await ledger.provisioner.ensureTopics(wanted);
    const second = await ledger.provisioner.ensureTopics(wanted);

    expect(first).toEqual({
      created: wanted.map((s) => s.topic),
      existing: [],
      expanded: [],
      mismatches: [],
    });
    expect(second).toEqual({
      created: [],
      existing: wanted.map((s) => s.topic),
      expanded: [],
      mismatches: [],
    });
    const offsets = await ledger.admin.fetchTopicOffsets(`${run}.usage`);
    expect(offsets.map((o) => o.partition)).toEqual([0, 1, 2]);
  });

  it('grows a topic with too few partitions and reports, never shrinks, one with too many', async () => {
    const [small] = specs(`${run}.grow`);
    await ledger.provisioner.ensureTopics([{ ...small, partitions: 2 }]);

    const grown = await ledger.provisioner.ensureTopics([{ ...small, partitions: 4 }]);
    const fewer = await ledger.provisioner.ensureTopics([{ ...small, partitions: 3 }]);

    expect(grown).toEqual({ created: [], existing: [small.topic], expanded: [small.topic], mismatches: [] });
    expect(fewer.mismatches).toEqual([{ topic: small.topic, setting: 'partitions', expected: 3, actual: 4 }]);
    expect(fewer.expanded).toEqual([]);
    expect(await ledger.admin.fetchTopicOffsets(small.topic)).toHaveLength(4);
  });
});

describe('LedgerProducer → LedgerConsumer (real Kafka)', () => {
  const topic = `${run}.flow`;
  const groupId = `${run}-group`;
  const keys = ['acme', 'globex', 'initech', 'umbrella', 'hooli', 'stark', 'wayne', 'tyrell'];
  const perKey = 20;
  const received: LedgerRecord[] = [];
  let consumer: LedgerConsumer;

  beforeAll(async () => {
    await ledger.provisioner.ensureTopics(specs(topic));
  });

  afterAll(async () => {
    await consumer.disconnect().catch(() => undefined);
  });

  it('delivers every message once, in order per key, and commits offset + 1 per partition', async () => {
    // given: messages interleaved across keys, sent in several requests (one batch across topics)
    for (let seq = 0; seq < perKey; seq += 5) {
      const chunk = keys.flatMap((key) =>
        [0, 1, 2, 3, 4].map((i) => ({
          key,
          value: `${key}:${seq + i}`,
          headers: { seq: String(seq + i), run },
        })),
      );
      await ledger.producer.sendBatch([{ topic, messages: chunk }]);
    }

    // when: a batch consumer in a fresh group reads from the beginning and commits by hand
    consumer = ledger.consumers.create({ groupId, topics: [topic], fromBeginning: true, autoCommit: false });
    await consumer.run(async (batch, context) => {
      received.push(...batch.records);
      const last = batch.records.at(-1);
      if (last) await context.commitThrough(last.offset);
    });
    const lag = await eventually(
      () => ledger.admin.groupLag(groupId, [topic]),
      (l) => l.reduce((sum, p) => sum + Number(p.committed ?? 0), 0) === keys.length * perKey,
      POLL,
    );

    // then: exactly the messages sent, no duplicates, each key's values in send order
    expect(received).toHaveLength(keys.length * perKey);
    for (const key of keys) {
      const values = received.filter((r) => r.key === key).map((r) => r.value?.toString());
      expect(values).toEqual(Array.from({ length: perKey }, (_, i) => `${key}:${i}`));
      expect(received.filter((r) => r.key === key).map((r) => r.headers.seq)).toEqual(
        Array.from({ length: perKey }, (_, i) => String(i)),
      );
    }
    // and: committed offsets equal the high watermarks, which add up to what was sent
    const watermarks = await ledger.admin.fetchTopicOffsets(topic);
    // (a partition no key hashed to has no commit at all)
    expect(lag.map((p) => p.committed ?? '0')).toEqual(watermarks.map((w) => w.high));
    expect(watermarks.reduce((sum, w) => sum + Number(w.high), 0)).toBe(keys.length * perKey);
    expect(lag.reduce((sum, p) => sum + p.lag, 0)).toBe(0);
  });

  it('describes the running group: one member owning every partition', async () => {
    const group = await eventually(
      () => ledger.admin.describeGroup(groupId),
      (g) => g.state === 'Stable',
      POLL,
    );

    expect(group.members).toHaveLength(1);
    expect(group.members[0].clientId).toBe(run);
    expect(group.members[0].assignment).toEqual({ [topic]: [0, 1, 2] });
  });

  it('reports lag for records produced while the group is stopped, and resets offsets', async () => {
    await consumer.disconnect();
    await eventually(
      () => ledger.admin.describeGroup(groupId),
      (g) => g.state === 'Empty',
      POLL,
    );
    const before = Date.now();
    await ledger.producer.send(topic, [
      { key: 'acme', value: 'late-1' },
      { key: 'acme', value: 'late-2' },
      { key: 'hooli', value: 'late-3' },
    ]);

    const lag = await ledger.admin.groupLag(groupId, [topic]);
    expect(lag.reduce((sum, p) => sum + p.lag, 0)).toBe(3);

    await ledger.admin.resetOffsets(groupId, topic, 'earliest');
    const fromStart = await ledger.admin.groupLag(groupId, [topic]);
    expect(fromStart.map((p) => p.committed)).toEqual(['0', '0', '0']);
    expect(fromStart.reduce((sum, p) => sum + p.lag, 0)).toBe(keys.length * perKey + 3);

    // the first offsets at or after `before` are exactly the three late records
    const byTime = await ledger.admin.resetOffsets(groupId, topic, { timestamp: before - 1 });
    const afterTime = await ledger.admin.groupLag(groupId, [topic]);
    expect(afterTime.map((p) => p.committed)).toEqual(byTime.map((p) => p.offset));
    expect(afterTime.reduce((sum, p) => sum + p.lag, 0)).toBe(3);

    await ledger.admin.resetOffsets(groupId, topic, 'latest');
    const atEnd = await ledger.admin.groupLag(groupId, [topic]);
    expect(atEnd.reduce((sum, p) => sum + p.lag, 0)).toBe(0);
  });

  it('refuses to reset the offsets of a group with running members', async () => {
    const live = ledger.consumers.create({ groupId, topics: [topic], fromBeginning: false });
    try {
      await live.run(() => Promise.resolve());
      await eventually(
        () => ledger.admin.describeGroup(groupId),
        (g) => g.state === 'Stable',
        POLL,
      );

      await expect(ledger.admin.resetOffsets(groupId, topic, 'earliest')).rejects.toThrow(
        /no running instances/,
      );
    } finally {
      await live.disconnect();
    }
  });
});
