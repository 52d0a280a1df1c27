/**
 * `tally replay`, `projections list|switch|drop` and `reconcile` against REAL Redis and Kafka.
 * Real: a private redis-server (namespaces are created, switched and dropped here), the shared broker.
 * The big replay reads three topics of this suite (created and deleted here), holding a log written
 * by relays of both contracts: its first half as the first contract wrote it (every usage event with
 * its `tally.decision.v1` twin, denials as v1), its second half as relays write it now (usage alone,
 * denials as `tally.decision.v2`). So its figures and exact totals are not mixed with other suites'
 * traffic; the CLI runs also replay the shared ledger topics, checked through this suite's unique
 * tenant.
 */
import {
  decisionEventFromOutbox,
  kafkaKeyOf,
  ledgerEventFromOutbox,
  usageEventFromOutbox,
  type OutboxPayload,
} from '@tally/events';
import { TOPICS, createLedger, ledgerTopicSpecs, type Ledger, type LedgerMessage } from '@tally/ledger';
import { OpsError, reconcileNamespaces, replay } from '@tally/ops';
import { scanKeys } from '@tally/redis';
import { NamespaceKeys, ProjectionNamespaces, readUsageHash } from '@tally/projections';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { PrivateRedis, testEnv, uniqueName } from '@tally/testing';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from './cli.support';

const EVENTS = 56_000; // decisions: each is applied once, from its usage event or its denial
const ALLOWED = EVENTS - EVENTS / 10;
const TWICE = EVENTS / 1000; // usage events published a second time
/** The first half's allowed decisions also have a v1 twin: read, and skipped (its usage folds it). */
const TWINS = ALLOWED / 2;
const RECORDS = ALLOWED + EVENTS / 10 + TWINS + TWICE; // 81 256 records
const DAY = 86_400_000;
const POLICY = 'replay-test';
/** Of both topics: a namespace replayed from them has as many shards. */
const PARTITIONS = 12;

/**
 * One decision as a relay publishes it: `v2` its one record (usage, or a tally.decision.v2 denial);
 * `v1` as relays of the first contract did: usage (when allowed) and its tally.decision.v1 event.
 */
function decisionMessages(tenant: string, principal: string, cost: number, timeMs: number, allowed: boolean) {
  const payload: OutboxPayload = {
    v: 1,
    outcome: allowed ? 'allowed' : 'denied',
    ...(allowed ? {} : { reason: 'sustained_quota_exhausted' }),
    id: ulid(timeMs),
    policy_set_version: 'v-replay',
    tenant,
    selectors: { tenant, principal },
    attributes: {},
    cost,
    policies: [
      {
        name: POLICY,
        mode: 'enforce',
        key: principal,
        windows: [{ name: 'w', role: 'sustained', limit: 100 }],
      },
    ],
  };
  const entry = {
    p: JSON.stringify(payload),
    t: String(timeMs),
    r: JSON.stringify([{ remaining: 1, reset_ms: 1000, would_deny: !allowed }]),
  };
  const usage = allowed ? usageEventFromOutbox(entry) : null;
  const message = (event: Parameters<typeof kafkaKeyOf>[0]): LedgerMessage => ({
    key: kafkaKeyOf(event),
    value: JSON.stringify(event),
  });
  return {
    usage: usage === null ? null : message(usage),
    v1: message(decisionEventFromOutbox(entry)),
    denial: allowed ? null : message(ledgerEventFromOutbox(entry)),
  };
}

describe('tally replay / projections / reconcile', () => {
  const run = uniqueName('cli-replay');
  const topics = { usage: `${run}.usage`, decision: `${run}.decision`, decisionV1: `${run}.decision-v1` };
  const tenants = Array.from({ length: 10 }, (_, i) => `${run}-t${i}`);
  const expectedCost = new Map<string, number>();
  let redis: PrivateRedis;
  let ops: RedisClient;
  let ledger: Ledger;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    ops = createRedisClient({ mode: 'single', url: redis.url }, 'command');
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'nothing' });
    env = { REDIS_URL: redis.url, KAFKA_BROKERS: testEnv().kafkaBrokers.join(',') };
    await ledger.provisioner.ensureTopics([
      ...ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }),
      { topic: topics.usage, partitions: PARTITIONS, replicationFactor: 1 },
      { topic: topics.decision, partitions: PARTITIONS, replicationFactor: 1 },
      { topic: topics.decisionV1, partitions: PARTITIONS, replicationFactor: 1 },
    ]);
    // Decisions over the last day; 1 in 10 denied (no usage event); a few published twice, as an
    // at-least-once relay may do. The first half as the first contract published them.
    const start = Date.now() - DAY;
    const usage: LedgerMessage[] = [];
    const decisionsV1: LedgerMessage[] = [];
    const denialsV2: LedgerMessage[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const tenant = tenants[i % tenants.length];
      const allowed = i % 10 !== 0;
      const cost = 1 + (i % 7);
      const m = decisionMessages(tenant, `p${i % 97}`, cost, start + Math.floor((i * DAY) / EVENTS), allowed);
      if (m.usage !== null) {
        usage.push(m.usage);
        expectedCost.set(tenant, (expectedCost.get(tenant) ?? 0) + cost);
        if (i % 1000 === 1) usage.push(m.usage);
      }
      if (i < EVENTS / 2) decisionsV1.push(m.v1);
      else if (m.denial !== null) denialsV2.push(m.denial);
    }
    // 1000 messages of ~700 bytes stay under the broker's 1 MiB batch limit even when every tenant
    // of the run (random names) hashes to the same partition.
    for (const [topic, list] of [
      [topics.usage, usage],
      [topics.decisionV1, decisionsV1],
      [topics.decision, denialsV2],
    ] as const)
      for (let i = 0; i < list.length; i += 1000) await ledger.producer.send(topic, list.slice(i, i + 1000));
  }, 300_000);

  afterAll(async () => {
    await ledger.admin.deleteTopics(Object.values(topics)).catch(() => undefined);
    await ledger.close();
    await ops.quit();
    await redis.stop();
  });

  const tenantCost = async (namespace: string, tenant: string): Promise<number> => {
    // Every shard's day buckets of the tenant: `tally:proj:{<ns>:s*}:usage:<tenant>:day:*`.
    const shards = new NamespaceKeys(namespace).allShards();
    let total = 0;
    for (const key of await scanKeys(ops, `${shards}}:usage:${tenant}:day:*`)) {
      total += readUsageHash(await ops.hgetall(key)).get(POLICY)?.cost ?? 0;
    }
    return total;
  };

  it(`replays ${RECORDS} records of both contracts into a fresh namespace, each decision once, and prints its rate`, async () => {
    const progress: number[] = [];

    const result = await replay(
      { ledger, redis: ops },
      {
        namespace: 'full-1',
        from: 'earliest',
        to: 'latest',
        topics,
        auditRetentionMs: 30 * DAY,
        onProgress: (p) => progress.push(p.done),
      },
    );

    console.log(
      `replay: ${result.records} records (${result.applied} applied, ${result.duplicates} duplicates) in ${result.elapsedMs} ms = ${result.perSecond} events/s`,
    );
    expect(result.records).toBe(RECORDS);
    expect(result.duplicates).toBe(TWICE);
    // every decision once: the v1 twins of allowed decisions are neither applied nor duplicates
    expect(result.applied).toBe(EVENTS);
    expect(progress.at(-1)).toBe(result.records);
    for (const tenant of tenants)
      expect(await tenantCost('full-1', tenant)).toBe(expectedCost.get(tenant) ?? 0);
    expect(await ops.hgetall(new NamespaceKeys('full-1').meta())).toMatchObject({
      replay: 'complete',
      shards: String(PARTITIONS),
    });
    const [listed] = await new ProjectionNamespaces(ops).list();
    expect(listed).toMatchObject({ name: 'full-1', events: result.applied, shards: PARTITIONS });
    // and the steps went to several shards: those of the partitions the 10 tenants hash to
    const usageShards = new Set(
      (await scanKeys(ops, `${new NamespaceKeys('full-1').allShards()}}:usage:*`)).map(
        (key) => /\{full-1:s(\d+)\}/.exec(key)?.[1],
      ),
    );
    expect(usageShards.size).toBeGreaterThan(1);
  }, 300_000);

  it('gives identical aggregates when the same range is replayed twice', async () => {
    await replay(
      { ledger, redis: ops },
      { namespace: 'full-2', from: 'earliest', to: 'latest', topics, auditRetentionMs: 30 * DAY },
    );

    const dump = async (namespace: string) => {
      const out: Record<string, unknown> = {};
      for (const key of await scanKeys(ops, new NamespaceKeys(namespace).allShards())) {
        const type = await ops.type(key);
        const name = key.replace(`{${namespace}:`, '{ns:');
        if (name.endsWith(':meta')) continue; // creation and update times differ by nature
        if (type === 'hash') out[name] = await ops.hgetall(key);
        else if (type === 'zset') out[name] = await ops.zrange(key, 0, '-1', 'WITHSCORES');
        else if (type === 'set') out[name] = (await ops.smembers(key)).sort();
      }
      return out;
    };
    const [a, b] = [await dump('full-1'), await dump('full-2')];
    expect(Object.keys(a).length).toBeGreaterThan(100);
    expect(b).toEqual(a);
    expect((await reconcileNamespaces(ops, { a: 'full-1', b: 'full-2' })).differences).toEqual([]);
  }, 300_000);

  it('refuses an existing namespace unless forced', async () => {
    const existing = replay(
      { ledger, redis: ops },
      { namespace: 'full-1', from: 'earliest', to: 'latest', topics, auditRetentionMs: DAY },
    );

    await expect(existing).rejects.toThrow(
      new OpsError('namespace full-1 exists; choose a fresh one, or --force to replace it', true),
    );
  });

  it('lists, switches and drops namespaces, and reconcile exits 1 on a difference', async () => {
    // given a cell of full-2 disturbed
    const cell = (await scanKeys(ops, `${new NamespaceKeys('full-2').allShards()}}:usage:*`))[0];
    await ops.hincrby(cell, `cost:${POLICY}`, 5);

    const reconcile = await tally(['reconcile', 'full-1', 'full-2', '--json'], env);
    const switched = await tally(['projections', 'switch', 'full-2'], env);
    const dropActive = await tally(['projections', 'drop', 'full-2'], env);
    await tally(['projections', 'switch', 'full-1'], env);
    const dropped = await tally(['projections', 'drop', 'full-2'], env);
    const list = await tally(['projections', 'list', '--json'], env);

    expect(reconcile.code).toBe(1);
    const diff = JSON.parse(reconcile.stdout) as {
      differences: { a: { cost: number }; b: { cost: number } }[];
    };
    expect(diff.differences).toHaveLength(1);
    expect(diff.differences[0].b.cost - diff.differences[0].a.cost).toBe(5);
    expect(switched).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('active namespace: full-2 (was none)'),
    });
    expect(dropActive).toEqual({
      code: 1,
      stdout: '',
      stderr: 'tally projections drop: namespace full-2 is active; switch to another one first',
    });
    expect(dropped).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^dropped namespace full-2 \(\d+ keys\)$/),
    });
    expect(await scanKeys(ops, new NamespaceKeys('full-2').allShards())).toEqual([]);
    expect(await scanKeys(ops, new NamespaceKeys('full-2').all())).toEqual([]);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      {
        name: 'full-1',
        active: true,
        events: EVENTS,
        updated: expect.any(String),
        shards: PARTITIONS,
        replay: 'complete',
      },
    ]);
  });

  it('replays the shared ledger topics from a time with `tally replay`, progress on stderr', async () => {
    // given a few decisions of a unique tenant on the shared topics, published after `from`
    const from = Date.now() - 1000;
    const tenant = `${run}-shared`;
    // (usage, and the v1 twins an older relay would have added: the default replay reads that
    // topic too, and must not count them)
    const messages = [1, 2, 3].map((cost) => decisionMessages(tenant, 'p', cost, Date.now(), true));
    await ledger.producer.send(
      TOPICS.usage,
      messages.map((m) => m.usage as LedgerMessage),
    );
    await ledger.producer.send(
      TOPICS.decisionV1,
      messages.map((m) => m.v1),
    );

    const result = await tally(
      ['replay', '--from', new Date(from).toISOString(), '--to', 'latest', '--namespace', 'shared-1'],
      env,
    );
    const again = await tally(
      ['replay', '--from', 'earliest', '--to', 'latest', '--namespace', 'shared-1'],
      env,
    );

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^replayed \d+ records from .* to latest into namespace shared-1/);
    expect(result.stderr).toMatch(/replay: \d+\/\d+ \(100%\)/);
    expect(await tenantCost('shared-1', tenant)).toBe(6);
    expect(again).toEqual({
      code: 2,
      stdout: '',
      stderr: 'tally replay: namespace shared-1 exists; choose a fresh one, or --force to replace it',
    });
  });
});
