/**
 * `tally replay --workers 2` as the built CLI (`node dist/apps/cli/src/main.js`, compiled by this
 * suite into a private folder) against REAL Kafka and Redis: the parent forks two worker processes,
 * prints one progress display on stderr, and the namespace they build is exactly the one
 * `--workers 1` builds from the same range (every shard key equal; `tally reconcile` exits 0). Real:
 * a private redis-server, the shared broker's ledger topics over a time range this suite fills.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { decisionEventFromOutbox, kafkaKeyOf, usageEventFromOutbox, type OutboxPayload } from '@tally/events';
import { TOPICS, createLedger, ledgerTopicSpecs, type Ledger, type LedgerMessage } from '@tally/ledger';
import { NamespaceKeys, ProjectionNamespaces } from '@tally/projections';
import { createRedisClient, scanKeys, type RedisClient } from '@tally/redis';
import { PrivateRedis, buildTree, sleep, testEnv, uniqueName } from '@tally/testing';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const DECISIONS = 4_000;

describe('tally replay --workers (built CLI, forked worker processes)', () => {
  const run = uniqueName('cli-workers');
  // Under the repository: the compiled tree resolves its packages from its node_modules.
  const out = join(resolve(__dirname, '../..'), '.local', run);
  let redis: PrivateRedis;
  let ops: RedisClient;
  let ledger: Ledger;
  let from = 0;
  let to = 0;

  const tally = (argv: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [join(out, 'apps/cli/src/main.js'), ...argv],
        {
          env: { ...process.env, REDIS_URL: redis.url, KAFKA_BROKERS: testEnv().kafkaBrokers.join(',') },
          maxBuffer: 16 * 1024 * 1024,
        },
        (error, stdout, stderr) =>
          resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
      );
    });

  beforeAll(async () => {
    await buildTree(out, ['cli']);
    redis = await PrivateRedis.start();
    ops = createRedisClient({ mode: 'single', url: redis.url }, 'command');
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'nothing' });
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    // given: decisions of 24 tenants published within [from, to) on the ledger topics, as relays of
    // the first contract did (usage and a tally.decision.v1 twin each: the twins are read and skipped)
    from = Date.now();
    const usage: LedgerMessage[] = [];
    const decisions: LedgerMessage[] = [];
    for (let i = 0; i < DECISIONS; i++) {
      const tenant = `${run}-t${i % 24}`;
      const payload: OutboxPayload = {
        v: 1,
        outcome: 'allowed',
        id: ulid(),
        policy_set_version: 'v-cli-workers',
        tenant,
        selectors: { tenant },
        attributes: {},
        cost: 1 + (i % 3),
        policies: [{ name: 'workers', mode: 'enforce', key: `k${i % 17}`, windows: [] }],
      };
      const entry = { p: JSON.stringify(payload), t: String(Date.now()), r: '[]' };
      const u = usageEventFromOutbox(entry);
      const d = decisionEventFromOutbox(entry);
      if (u !== null) usage.push({ key: kafkaKeyOf(u), value: JSON.stringify(u) });
      decisions.push({ key: kafkaKeyOf(d), value: JSON.stringify(d) });
    }
    for (let i = 0; i < usage.length; i += 500)
      await ledger.producer.send(TOPICS.usage, usage.slice(i, i + 500));
    for (let i = 0; i < decisions.length; i += 500)
      await ledger.producer.send(TOPICS.decisionV1, decisions.slice(i, i + 500));
    to = Date.now() + 1;
    // Records stamped before `to` by other suites' producers are all in once this has passed.
    await sleep(2_000);
  }, 300_000);

  afterAll(async () => {
    await ledger?.close();
    await ops?.quit();
    await redis?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  it('builds with 2 worker processes exactly the namespace 1 process builds, with one progress display', async () => {
    const range = ['--from', new Date(from).toISOString(), '--to', new Date(to).toISOString()];
    const one = await tally(['replay', ...range, '--namespace', 'w1', '--workers', '1', '--json']);
    const two = await tally(['replay', ...range, '--namespace', 'w2', '--workers', '2', '--json']);
    expect(one.code, one.stderr).toBe(0);
    expect(two.code, two.stderr).toBe(0);
    const a = JSON.parse(one.stdout) as { records: number; applied: number; workers: number };
    const b = JSON.parse(two.stdout) as { records: number; applied: number; workers: number };
    expect(a.records).toBeGreaterThanOrEqual(2 * DECISIONS);
    expect(b).toMatchObject({ records: a.records, applied: a.applied, workers: 2 });
    // one display: the parent's lines only, counting up to every record of both workers
    const lines = two.stderr.split('\n').filter((l) => l.startsWith('replay: '));
    expect(lines.at(-1)).toContain(`replay: ${b.records}/${b.records} (100%)`);

    const dump = async (namespace: string) => {
      const keys: Record<string, unknown> = {};
      for (const key of await scanKeys(ops, new NamespaceKeys(namespace).allShards())) {
        if (key.endsWith(':meta')) continue;
        const type = await ops.type(key);
        const name = key.replace(`{${namespace}:`, '{ns:');
        keys[name] =
          type === 'hash'
            ? await ops.hgetall(key)
            : type === 'zset'
              ? await ops.zrange(key, 0, '-1', 'WITHSCORES')
              : (await ops.smembers(key)).sort();
      }
      return keys;
    };
    const [x, y] = [await dump('w1'), await dump('w2')];
    expect(Object.keys(x).length).toBeGreaterThan(100);
    expect(y).toEqual(x);
    expect((await tally(['reconcile', 'w1', 'w2'])).code).toBe(0);
    expect((await new ProjectionNamespaces(ops).list()).map((n) => [n.name, n.replay, n.events])).toEqual([
      ['w1', 'complete', a.applied],
      ['w2', 'complete', a.applied],
    ]);
  }, 300_000);
});
