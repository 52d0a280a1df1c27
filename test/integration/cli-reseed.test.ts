/**
 * `tally reseed` against REAL Redis and Kafka. Real: a private redis-server (enforcement keys are
 * deleted here, never in the shared Redis), the shared broker and its `tally.usage.v1` topic (this
 * suite's tenant is unique, so other traffic in the topic only adds records to skip). Traffic goes
 * through the engine's DecisionService; the outbox entries become usage events with @tally/events'
 * builders, as the relay would publish them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecisionService, EngineService, allShardKeys, type EngineOptions } from '@tally/engine';
import { kafkaKeyOf, usageEventFromOutbox, type OutboxEntry } from '@tally/events';
import { TOPICS, createLedger, ledgerTopicSpecs, type Ledger } from '@tally/ledger';
import { reseed } from '@tally/ops';
import { scanKeys } from '@tally/redis';
import { compilePolicyFile, type PolicySet } from '@tally/policy';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { PrivateRedis, testEnv, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tally } from './cli.support';

const SHARDS = 64;

describe('tally reseed', () => {
  const tenant = uniqueName('rs-tenant');
  const policyName = uniqueName('rs');
  const dir = mkdtempSync(join(tmpdir(), 'tally-reseed-'));
  const policiesFile = join(dir, 'policies.yaml');
  // The engine decides at this fixed time and reseed is told the same, so an hour boundary passing
  // during the test changes nothing.
  const now = Date.now();
  let redis: PrivateRedis;
  let engineRedis: Redis;
  let opsRedis: RedisClient;
  let ledger: Ledger;
  let sut: DecisionService;
  let set: PolicySet;

  const decide = (principal: string, cost: number) => sut.decide({ selectors: { tenant, principal }, cost });
  // One state hash per principal (policy key), one field per window (decide.lua).
  const windowKeys = async () => (await scanKeys(opsRedis, `tally:v1:*:pk:${policyName}:*`)).sort();
  const SUSTAINED = ['hourly', 'sliding', 'monthly', 'spaced'];
  /** The sustained windows' state, per `<key>|<window>`: what reseed rebuilds (the burst and `_e` aside). */
  const snapshot = async () => {
    const out: Record<string, string> = {};
    for (const key of await windowKeys())
      for (const [field, value] of Object.entries(await opsRedis.hgetall(key)))
        if (SUSTAINED.includes(field)) out[`${key}|${field}`] = value;
    return out;
  };

  beforeAll(async () => {
    writeFileSync(
      policiesFile,
      [
        'policies:',
        `  - name: ${policyName}`,
        `    match: { tenant: [${tenant}] }`,
        '    key: [principal]',
        '    max_cost: 10',
        '    windows:',
        '      - { name: burst, role: burst, algorithm: token_bucket, limit: 50, period: 1s }',
        '      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }',
        '      - { name: sliding, role: sustained, algorithm: sliding_window, limit: 100, period: 2h }',
        '      - { name: monthly, role: sustained, algorithm: calendar_month, limit: 1000, period: 1mo }',
        // gcra, one unit an hour, 20 at once: its TAT is rebuilt by replaying the ledger
        '      - { name: spaced, role: sustained, algorithm: gcra, limit: 24, period: 1d, burst: 20 }',
      ].join('\n'),
    );
    const compiled = compilePolicyFile(readFileSync(policiesFile, 'utf8'));
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.errors));
    set = compiled.set;
    redis = await PrivateRedis.start();
    engineRedis = new Redis(redis.url, {
      protocol: 2,
      enableOfflineQueue: false,
      enableAutoPipelining: false,
    });
    await new Promise((r) => engineRedis.once('ready', r));
    opsRedis = createRedisClient({ mode: 'single', url: redis.url }, 'command');
    const options: EngineOptions = {
      redis: { mode: 'single', url: redis.url },
      shards: SHARDS,
      backendTimeoutMs: 2_000,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'reseed-test-secret-0123456789',
      scriptNow: () => now,
    };
    sut = new DecisionService(new EngineService(engineRedis, options), { current: set }, options);
    ledger = createLedger({
      brokers: testEnv().kafkaBrokers,
      clientId: 'cli-reseed-test',
      logLevel: 'nothing',
    });
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
  });

  afterAll(async () => {
    await ledger.close();
    await Promise.all([engineRedis.quit(), opsRedis.quit()]);
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** What the relay does: outbox entries → usage events on the ledger. */
  async function publishOutbox(): Promise<number> {
    const messages = [];
    for (const shard of allShardKeys(SHARDS)) {
      for (const [id, flat] of await redis.client.xrange(shard.outbox, '-', '+')) {
        const fields: Record<string, string> = {};
        for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
        const event = usageEventFromOutbox(fields as unknown as OutboxEntry);
        if (event !== null) messages.push({ key: kafkaKeyOf(event), value: JSON.stringify(event) });
        await redis.client.xdel(shard.outbox, id);
      }
    }
    await ledger.producer.send(TOPICS.usage, messages);
    return messages.length;
  }

  it('rebuilds the sustained counters so the next decisions deny exactly as before the loss', async () => {
    // given principal a spent the whole hourly limit (4 + 3 + 3) and b spent 5, all in the ledger
    for (const [principal, cost] of [
      ['a', 4],
      ['a', 3],
      ['b', 5],
      ['a', 3],
    ] as const) {
      expect((await decide(principal, cost)).allowed).toBe(true);
    }
    const deniedBefore = await decide('a', 1);
    expect(deniedBefore).toMatchObject({ allowed: false, reason: 'sustained_quota_exhausted' });
    expect(await publishOutbox()).toBe(4);
    const before = await snapshot();
    expect(Object.keys(before)).toHaveLength(8);
    expect(before[`${(await windowKeys()).find((k) => k.endsWith(':a'))}|spaced`]).toBe(
      `g${now + 10 * 3_600_000}:0`,
    );

    // when Redis loses the enforcement keys
    await opsRedis.del(...(await windowKeys()));
    expect(await snapshot()).toEqual({});
    // (a decision now would be allowed: that is what the loss does)

    // and reseed rebuilds them from the ledger
    const result = await reseed({ ledger, redis: opsRedis }, { policiesFile, shards: SHARDS, nowMs: now });

    // then every sustained hash is exactly what the engine had written, burst buckets left alone
    expect(await snapshot()).toEqual(before);
    expect(result.raised).toBe(8);
    expect(result.eventsCounted).toBe(4);
    expect(result.windows.map((w) => w.window)).toEqual(['hourly', 'sliding', 'monthly', 'spaced']);
    // and the next decisions deny exactly as they would have
    const deniedAfter = await decide('a', 1);
    expect(deniedAfter).toMatchObject({
      allowed: false,
      reason: deniedBefore.reason,
      retry_after_ms: deniedBefore.retry_after_ms,
      binding: deniedBefore.binding,
    });
    expect((await decide('b', 6)).allowed).toBe(false);
    expect((await decide('b', 5)).allowed).toBe(true);
  });

  it('never lowers a counter that is higher than the ledger says', async () => {
    // given b's hourly counter is now 10 in Redis (5 from the ledger, 5 just spent and not yet published)
    const hourly = (await windowKeys()).find((k) => k.endsWith(':b'));
    expect(hourly).toBeDefined();
    const stored = await opsRedis.hget(hourly as string, 'hourly');
    expect(stored).not.toBeNull();

    const result = await reseed({ ledger, redis: opsRedis }, { policiesFile, shards: SHARDS, nowMs: now });

    expect(await opsRedis.hget(hourly as string, 'hourly')).toEqual(stored);
    // and b's TAT (10 h ahead in Redis, 5 h by the ledger) stays the later one
    expect(await opsRedis.hget(hourly as string, 'spaced')).toBe(`g${now + 10 * 3_600_000}:0`);
    expect(result.keys.find((k) => k.key === hourly && k.window === 'hourly')).toMatchObject({
      before: 10,
      after: 10,
      raised: false,
    });
  });

  it('runs as `tally reseed --json` with the Redis clock and reports what it did', async () => {
    const run = await tally(
      ['reseed', '--policies', policiesFile, '--policy', policyName, '--redis-url', redis.url, '--json'],
      { KAFKA_BROKERS: testEnv().kafkaBrokers.join(',') },
    );

    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as { windows: unknown[]; raised: number; unchanged: number };
    expect(json.windows).toHaveLength(4);
    expect(json.raised).toBe(0);
    expect(json.unchanged).toBeGreaterThan(0);
  });

  it('refuses a policy the file does not have (exit 2)', async () => {
    const run = await tally(
      ['reseed', '--policies', policiesFile, '--policy', 'nope', '--redis-url', redis.url],
      {},
    );

    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: `tally reseed: no policy named nope in ${policiesFile}`,
    });
  });
});
