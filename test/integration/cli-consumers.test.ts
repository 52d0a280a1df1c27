/**
 * `tally consumers status|reset` against the REAL broker, and the projector's stored offsets in a
 * private redis-server. Every topic and group is this suite's own (the real `tally-projector` group
 * is never touched); the projector-group behaviour is exercised by naming this suite's group as the
 * projector group through the ops API.
 */
import { createLedger, type Ledger, type LedgerConsumer } from '@tally/ledger';
import { resetConsumers } from '@tally/ops';
import { ProjectionKeys, ProjectionNamespaces } from '@tally/projections';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { eventually, PrivateRedis, testEnv, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from './cli.support';

/** Group joins and offset commits on the shared broker take seconds. */
const POLL = { timeoutMs: 30_000, intervalMs: 200 } as const;

describe('tally consumers', () => {
  const run = uniqueName('cli-consumers');
  const topic = `${run}.t`;
  const group = `${run}-g`;
  let ledger: Ledger;
  let consumer: LedgerConsumer;
  let redis: PrivateRedis;
  let ops: RedisClient;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'nothing' });
    redis = await PrivateRedis.start();
    ops = createRedisClient({ mode: 'single', url: redis.url }, 'command');
    env = { REDIS_URL: redis.url, KAFKA_BROKERS: testEnv().kafkaBrokers.join(',') };
    await ledger.provisioner.ensureTopics([{ topic, partitions: 3, replicationFactor: 1 }]);
    await ledger.producer.send(
      topic,
      Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })),
    );
    consumer = ledger.consumers.create({ groupId: group, topics: [topic], fromBeginning: true });
    await consumer.run(async (batch, context) => {
      await context.commitThrough(batch.records[batch.records.length - 1].offset);
    });
    await eventually(
      () => ledger.admin.groupLag(group, [topic]),
      (lag) => lag.every((p) => p.committed !== null && p.lag === 0),
      POLL,
    );
  });

  afterAll(async () => {
    await ledger.admin.deleteTopics([topic]).catch(() => undefined);
    await ledger.close();
    await ops.quit();
    await redis.stop();
  });

  it('shows members, assignment, committed offsets and lag', async () => {
    const result = await tally(['consumers', 'status', '--group', group, '--topic', topic, '--json'], env);
    const text = await tally(['consumers', 'status', '--group', group, '--topic', topic], env);

    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout) as {
      state: string;
      members: { clientId: string; assignment: Record<string, number[]> }[];
      partitions: { partition: number; committed: string; high: string; lag: number; owner: string }[];
      totalLag: number;
    };
    expect(status.state).toBe('Stable');
    expect(status.members).toEqual([
      expect.objectContaining({ clientId: run, assignment: { [topic]: [0, 1, 2] } }),
    ]);
    expect(status.partitions.map((p) => [p.partition, p.lag, p.owner, p.committed === p.high])).toEqual([
      [0, 0, run, true],
      [1, 0, run, true],
      [2, 0, run, true],
    ]);
    expect(status.totalLag).toBe(0);
    expect(text.stdout).toContain(`group ${group}: Stable, 1 member(s), lag 0`);
  });

  it('refuses to reset while the group has members (exit 1)', async () => {
    const result = await tally(
      ['consumers', 'reset', '--group', group, '--topic', topic, '--to', 'earliest'],
      env,
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `tally consumers reset: group ${group} has 1 running member(s) (${run}@${
        (await ledger.admin.describeGroup(group)).members[0].clientHost
      }): stop every consumer of the group, then reset`,
    );
  });

  it('resets a stopped group, and the projector offsets stored with the active namespace', async () => {
    // given the group stopped, and this group standing for the projector with an active namespace
    await consumer.disconnect();
    await eventually(
      () => ledger.admin.describeGroup(group),
      (g) => g.members.length === 0,
      POLL,
    );
    // (in 2 shards: partitions 0 and 2 in shard 0, partition 1 in shard 1)
    await new ProjectionNamespaces(ops).ensureActive('live', 2);
    const stored = new ProjectionKeys('live', 0).offsets();
    const stored1 = new ProjectionKeys('live', 1).offsets();
    await ops.hset(stored, `${topic}:0`, '999');

    const result = await resetConsumers(
      { admin: ledger.admin, redis: ops, projectorGroup: group },
      group,
      [topic],
      'earliest',
    );
    const lag = await ledger.admin.groupLag(group, [topic]);

    expect(result.namespace).toBe('live');
    expect(result.partitions.map((p) => p.offset)).toEqual(['0', '0', '0']);
    expect(lag.map((p) => p.committed)).toEqual(['0', '0', '0']);
    expect(lag.reduce((n, p) => n + p.lag, 0)).toBe(30);
    expect(await ops.hgetall(stored)).toEqual({
      [`${topic}:0`]: '0',
      [`${topic}:2`]: '0',
    });
    expect(await ops.hgetall(stored1)).toEqual({ [`${topic}:1`]: '0' });
  });

  it('resets to latest through the CLI and prints where the group resumes', async () => {
    const result = await tally(
      ['consumers', 'reset', '--group', group, '--topic', topic, '--to', 'latest', '--json'],
      env,
    );

    expect(result.code).toBe(0);
    const json = JSON.parse(result.stdout) as { partitions: { offset: string }[]; namespace: null };
    expect(json.namespace).toBeNull();
    const lag = await ledger.admin.groupLag(group, [topic]);
    expect(json.partitions.map((p) => p.offset)).toEqual(lag.map((p) => p.high));
    expect(lag.every((p) => p.lag === 0)).toBe(true);
  });
});
