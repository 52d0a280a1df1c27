/**
 * `replayWithWorkers` (what `tally replay --workers N` runs) against REAL Kafka and Redis: the plan
 * dealt to 2 workers by shard gives exactly the namespace 1 worker gives, and the live projector
 * gives (in-process, over the same topics, from their start) — every shard key equal,
 * reconcile without a difference, every tenant's cost exact — over topics that grew from 4 to 8
 * partitions mid-traffic, with twins re-published after the growth (same key, so the same shard: each
 * counted once). Real: a private redis-server, the shared broker (topics of this suite, deleted
 * after). The workers here run in this process (the port's test double runs `replayRanges`); the
 * forked processes of the CLI are covered by cli-replay-workers.test.ts.
 */
import { kafkaKeyOf, usageEventFromOutbox, type OutboxPayload } from '@tally/events';
import { createLedger, type Ledger, type LedgerMessage } from '@tally/ledger';
import {
  dealRanges,
  reconcileNamespaces,
  replay,
  replayRanges,
  replayWithWorkers,
  type ReplayAssignment,
} from '@tally/ops';
import { NamespaceKeys, ProjectionNamespaces, readUsageHash } from '@tally/projections';
import { createRedisClient, scanKeys, type RedisClient } from '@tally/redis';
import { PrivateRedis, eventually, testEnv, uniqueName } from '@tally/testing';
import { InProcessProjector, PROJECTOR_POLL } from './projector.harness';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DAY = 86_400_000;
const POLICY = 'workers-test';
const PER_PHASE = 3_000;

/** An allowed decision's one record, its usage event (the decision topic stays empty). */
function messages(tenant: string, i: number, timeMs: number): { usage: LedgerMessage } {
  const payload: OutboxPayload = {
    v: 1,
    outcome: 'allowed',
    id: ulid(timeMs),
    policy_set_version: 'v-workers',
    tenant,
    selectors: { tenant, principal: `p${i % 13}` },
    attributes: {},
    cost: 1 + (i % 5),
    policies: [{ name: POLICY, mode: 'enforce', key: `p${i % 13}`, windows: [] }],
  };
  const entry = { p: JSON.stringify(payload), t: String(timeMs), r: '[]' };
  const usage = usageEventFromOutbox(entry);
  if (usage === null) throw new Error('an allowed decision with a cost has a usage event');
  return { usage: { key: kafkaKeyOf(usage), value: JSON.stringify(usage) } };
}

describe('replay with workers over disjoint shards', () => {
  const run = uniqueName('replay-workers');
  const topics = { usage: `${run}.usage`, decision: `${run}.decision` };
  const tenants = Array.from({ length: 16 }, (_, i) => `${run}-t${i}`);
  const expectedCost = new Map<string, number>();
  let twins = 0;
  let redis: PrivateRedis;
  let ops: RedisClient;
  let ledger: Ledger;

  const produce = async (by: Ledger, usage: LedgerMessage[]) => {
    for (let i = 0; i < usage.length; i += 500) await by.producer.send(topics.usage, usage.slice(i, i + 500));
  };

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    ops = createRedisClient({ mode: 'single', url: redis.url }, 'command');
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'nothing' });
    const provision = (partitions: number) =>
      ledger.provisioner.ensureTopics([
        { topic: topics.usage, partitions, replicationFactor: 1 },
        { topic: topics.decision, partitions, replicationFactor: 1 },
      ]);
    // given: the live namespace created when the topics had 4 partitions (so 4 shards)
    await provision(4);
    await new ProjectionNamespaces(ops).ensureActive('live', 4);
    const start = Date.now() - DAY;
    const phase = (from: number) => {
      const usage: LedgerMessage[] = [];
      for (let i = from; i < from + PER_PHASE; i++) {
        const tenant = tenants[i % tenants.length];
        const m = messages(tenant, i, start + i * 1000);
        usage.push(m.usage);
        expectedCost.set(tenant, (expectedCost.get(tenant) ?? 0) + 1 + (i % 5));
      }
      return { usage };
    };
    const first = phase(0);
    await produce(ledger, first.usage);
    // when the topics grow to 8 partitions, traffic goes on, and a relay re-publishes 1 in 100 of
    // the first phase's usage events (same key: murmur2 mod 8 is a partition of the same shard)
    await provision(8);
    const second = phase(PER_PHASE);
    const again = first.usage.filter((_, i) => i % 100 === 7);
    twins = again.length;
    // A fresh producer: one created before the growth keeps partitioning by its cached 4 partitions.
    const after = createLedger({
      brokers: testEnv().kafkaBrokers,
      clientId: `${run}-after`,
      logLevel: 'nothing',
    });
    try {
      await produce(after, [...second.usage, ...again]);
    } finally {
      await after.close();
    }
    // and the growth really moved keys: the new partitions hold records
    const partitions = await ledger.admin.fetchTopicOffsets(topics.usage);
    expect(partitions.filter((p) => p.partition >= 4 && BigInt(p.high) > 0n).length).toBeGreaterThan(0);
  }, 300_000);

  afterAll(async () => {
    await ledger?.admin.deleteTopics([topics.usage, topics.decision]).catch(() => undefined);
    await ledger?.close();
    await ops?.quit();
    await redis?.stop();
  });

  const inProcess = async (
    assignment: ReplayAssignment,
    onRead: (records: number) => void,
  ): Promise<Awaited<ReturnType<typeof replayRanges>>> =>
    replayRanges({ ledger, redis: ops }, assignment.plan, assignment.ranges, onRead);

  const dump = async (namespace: string): Promise<Record<string, unknown>> => {
    const out: Record<string, unknown> = {};
    for (const key of await scanKeys(ops, new NamespaceKeys(namespace).allShards())) {
      if (key.endsWith(':meta')) continue; // creation and update times differ by nature
      const type = await ops.type(key);
      const name = key.replace(`{${namespace}:`, '{ns:');
      if (type === 'hash' && key.endsWith(':offsets')) {
        // A replay stores the end of every range, 0 for a partition no record went to; the live
        // projector stores only partitions it read from. Both start such a partition at 0.
        // A shard none of whose partitions holds a record (the run's random tenant names decide
        // where keys hash) thus has an all-zero hash in a replay and none from the live projector.
        const offsets = Object.entries(await ops.hgetall(key)).filter(([, offset]) => offset !== '0');
        if (offsets.length > 0) out[name] = Object.fromEntries(offsets);
      } else if (type === 'hash') out[name] = await ops.hgetall(key);
      else if (type === 'zset') out[name] = await ops.zrange(key, 0, '-1', 'WITHSCORES');
      else if (type === 'set') out[name] = (await ops.smembers(key)).sort();
    }
    return out;
  };

  it('deals the partitions of both topics to workers by shard, disjoint and complete', () => {
    const plan = {
      namespace: 'x',
      shards: 4,
      topics,
      auditRetentionMs: DAY,
      ranges: [0, 1, 2, 3, 4, 5, 6, 7].flatMap((partition) =>
        [topics.usage, topics.decision].map((topic) => ({ topic, partition, start: '0', end: '1' })),
      ),
    };
    const shares = dealRanges(plan, 2).map((share) => share.map((r) => `${r.topic.slice(-1)}${r.partition}`));
    // shard = p mod 4; worker = shard mod 2: partitions 0, 2, 4, 6 to worker 0, the odd ones to 1
    expect(shares).toEqual([
      ['e0', 'n0', 'e2', 'n2', 'e4', 'n4', 'e6', 'n6'],
      ['e1', 'n1', 'e3', 'n3', 'e5', 'n5', 'e7', 'n7'],
    ]);
    expect(dealRanges(plan, 8)).toHaveLength(4); // never more workers than shards
  });

  it('gives with 2 workers exactly the namespace 1 worker gives, also after the partitions grew', async () => {
    const options = { from: 'earliest' as const, to: 'latest' as const, topics, auditRetentionMs: 30 * DAY };
    const progress: number[] = [];
    const one = await replay({ ledger, redis: ops }, { ...options, namespace: 'one' });
    const two = await replayWithWorkers(
      { ledger, redis: ops },
      { ...options, namespace: 'two', workers: 2, onProgress: (p) => progress.push(p.done) },
      inProcess,
    );

    // then: same records, every twin counted once, in both
    const distinct = 2 * PER_PHASE;
    expect(one).toMatchObject({ records: distinct + twins, applied: distinct, duplicates: twins });
    expect(two).toMatchObject({
      records: distinct + twins,
      applied: distinct,
      duplicates: twins,
      workers: 2,
    });
    expect(progress.at(-1)).toBe(two.records);
    // the replays kept the live namespace's 4 shards (the count the old records were written under)
    const namespaces = new ProjectionNamespaces(ops);
    expect([await namespaces.shards('one'), await namespaces.shards('two')]).toEqual([4, 4]);
    // identical keys, reconcile finds no difference, every tenant's cost exact
    const [a, b] = [await dump('one'), await dump('two')];
    expect(Object.keys(a).length).toBeGreaterThan(50);
    expect(b).toEqual(a);
    expect((await reconcileNamespaces(ops, { a: 'one', b: 'two' })).differences).toEqual([]);
    for (const tenant of tenants) {
      let cost = 0;
      for (const key of await scanKeys(ops, `${new NamespaceKeys('two').allShards()}}:usage:${tenant}:day:*`))
        cost += readUsageHash(await ops.hgetall(key)).get(POLICY)?.cost ?? 0;
      expect(cost).toBe(expectedCost.get(tenant));
    }
    // and the live projector, started on the grown topics, projects exactly the same into `live`
    // (created with 4 shards before the growth)
    const projector = await InProcessProjector.start(redis.url, testEnv().kafkaBrokers, {
      groupId: `${run}-group`,
      topics: { ...topics, deadLetter: `${run}.dlq` },
      topicSpecs: [
        { topic: topics.usage, partitions: 8, replicationFactor: 1 },
        { topic: topics.decision, partitions: 8, replicationFactor: 1 },
        { topic: `${run}.dlq`, partitions: 1, replicationFactor: 1 },
      ],
      lagPollMs: 1_000,
    });
    try {
      const ends = one.offsets.reduce((n, o) => n + Number(o.end), 0);
      await eventually(
        async () => [...(await namespaces.offsets('live')).values()].reduce((n, o) => n + Number(o), 0),
        (stored) => stored === ends,
        { ...PROJECTOR_POLL, what: 'the live projector at the end of both topics' },
      );
    } finally {
      await projector.stop();
    }
    expect(await dump('live')).toEqual(a);
    // and the completion marker is written once, after both workers
    expect((await namespaces.list()).find((n) => n.name === 'two')).toMatchObject({
      replay: 'complete',
      events: distinct,
    });
  }, 300_000);

  it('fails the replay when a worker fails: no completion marker', async () => {
    let calls = 0;
    const failing = async (assignment: ReplayAssignment, onRead: (records: number) => void) => {
      if (calls++ === 1) throw new Error('worker killed');
      return inProcess(assignment, onRead);
    };
    await expect(
      replayWithWorkers(
        { ledger, redis: ops },
        { from: 'earliest', to: 'latest', topics, auditRetentionMs: DAY, namespace: 'broken', workers: 2 },
        failing,
      ),
    ).rejects.toThrow(/worker 1: worker killed.*stays incomplete/);
    expect((await new ProjectionNamespaces(ops).list()).find((n) => n.name === 'broken')).toMatchObject({
      replay: 'running',
    });
  }, 300_000);
});
