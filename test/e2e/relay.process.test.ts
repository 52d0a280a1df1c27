/**
 * The built relay (`node dist/apps/relay/src/main.js`, compiled by this suite into a private folder
 * so it never races other engineers' `npm run build`) as a child process, against REAL Redis (a
 * redis-server of this suite's own: outbox key names are fixed and the shared Redis holds other
 * engineers' streams) and the shared REAL Kafka. Events are read from the offsets recorded before the
 * suite, keeping only this run's tenants.
 * - SIGKILL mid-batch: another relay re-claims what the dead one left pending; every appended decision
 *   reaches Kafka, and an id appears twice only if it was pending in the dead relay (published, not
 *   yet acknowledged).
 * - SIGTERM: the relay finishes its batch (produce + ack), leaves nothing pending, exits 0.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Test, type TestingModule } from '@nestjs/testing';
import { DecisionService, EngineService, allShardKeys, type EngineOptions } from '@tally/engine';
import {
  createLedger,
  LedgerModule,
  ledgerTopicSpecs,
  TOPICS,
  type Ledger,
  type LedgerConsumer,
} from '@tally/ledger';
import { METRICS_REGISTRY, ObservabilityModule } from '@tally/observability';
import { OutboxModule, RELAY_GROUP } from '@tally/outbox';
import type { Policy } from '@tally/policy';
import { buildTree, eventually, freePort, PrivateRedis, sleep, testEnv, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SHARDS = 4;
const root = resolve(__dirname, '../..');
const run = uniqueName('relay-e2e');
const out = join(root, '.local', run);
const outboxes = allShardKeys(SHARDS).map((k) => k.outbox);

/** A child relay publishes within a poll or two; group joins on the shared broker take seconds. */
const POLL = { timeoutMs: 40_000, intervalMs: 100 } as const;

interface Child {
  readonly process: ChildProcess;
  readonly port: number;
  readonly output: string[];
  readonly exited: Promise<number | null>;
}

async function spawnRelay(redisUrl: string): Promise<Child> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(out, 'apps/relay/src/main.js')], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      REDIS_URL: redisUrl,
      KAFKA_BROKERS: testEnv().kafkaBrokers.join(','),
      TALLY_SHARDS: String(SHARDS),
      TALLY_AUTH: 'none',
      TALLY_TOKEN_SECRET: 'relay-e2e-secret-0123456789',
      TALLY_RELAY_PORT: String(port),
      TALLY_TOPIC_PARTITIONS: '12',
      TALLY_LOG_LEVEL: 'warn',
      KAFKAJS_NO_PARTITIONER_WARNING: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (d: Buffer) => output.push(String(d)));
  child.stderr?.on('data', (d: Buffer) => output.push(String(d)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  await eventually(
    () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status,
        () => 0,
      ),
    (status) => status === 200 || child.exitCode !== null,
    { ...POLL, timeoutMs: 30_000 },
  );
  if (child.exitCode !== null) throw new Error(`relay exited: ${output.join('')}`);
  return { process: child, port, output, exited };
}

/** Usage event ids of this run's tenants published from now on, duplicates included. */
async function collect(
  ledger: Ledger,
): Promise<{ ids: string[]; consumer: LedgerConsumer; caughtUp: () => Promise<void> }> {
  const high = new Map<string, string>();
  const offsets = await eventually(
    () => ledger.admin.fetchTopicOffsets(TOPICS.usage).catch(() => undefined),
    (o) => o !== undefined,
    POLL,
  );
  for (const p of offsets ?? []) high.set(String(p.partition), p.high);
  /** partition → the next offset this collector will read. */
  const next = new Map<string, bigint>([...high].map(([p, o]) => [p, BigInt(o)]));
  const consumer = ledger.consumers.create({
    groupId: uniqueName('relay-e2e-collector'),
    topics: [TOPICS.usage],
    fromBeginning: true,
    maxWaitTimeMs: 200,
  });
  consumer.onAssigned((assignment) => {
    for (const p of assignment[TOPICS.usage] ?? [])
      consumer.seek(TOPICS.usage, p, high.get(String(p)) ?? '0');
  });
  const ids: string[] = [];
  await consumer.run((batch) => {
    for (const record of batch.records) {
      const event = JSON.parse(String(record.value)) as { id: string; data: { tenant?: string } };
      if (event.data.tenant?.startsWith(run)) ids.push(event.id);
    }
    const last = batch.records.at(-1);
    if (last) next.set(String(batch.partition), BigInt(last.offset) + 1n);
    return Promise.resolve();
  });
  /**
   * The barrier before "and nothing more": every record the topic holds now has been read. What a
   * relay published before (a duplicate included) is below today's high watermarks.
   */
  const caughtUp = async (): Promise<void> => {
    const ends = await ledger.admin.fetchTopicOffsets(TOPICS.usage);
    await eventually(
      () => ends.every((p) => (next.get(String(p.partition)) ?? 0n) >= BigInt(p.high)),
      (done) => done,
      POLL,
    );
  };
  return { ids, consumer, caughtUp };
}

const POLICY: Policy = {
  name: 'relay-e2e',
  match: {},
  unless: {},
  key: ['principal'],
  windows: [
    { name: 'w', role: 'sustained', algorithm: 'fixed_window', limit: 100_000_000, periodMs: 3_600_000 },
  ],
  maxCost: 5,
  onBackendFailure: 'fail_closed',
  mode: 'enforce',
  enabled: true,
};

/** Decisions from the engine's DecisionService, 20 in flight, until stopped. */
function startWriter(url: string, tenantPrefix: string) {
  const redis = new Redis(url, { enableAutoPipelining: false });
  const options: EngineOptions = {
    redis: { mode: 'single', url },
    shards: SHARDS,
    backendTimeoutMs: 5_000,
    idempotencyTtlMs: 60_000,
    tokenSecret: 'relay-e2e-secret-0123456789',
  };
  const service = new DecisionService(
    new EngineService(redis, options),
    { current: { version: run, policies: [POLICY], loadedAt: 0 } },
    options,
  );
  const ids: string[] = [];
  let stopped = false;
  const done = (async () => {
    for (let n = 0; !stopped; n += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          service.decide({
            selectors: { tenant: `${tenantPrefix}-${(n + i) % 32}`, principal: 'p' },
            cost: 1,
          }),
        ),
      );
      ids.push(...batch.filter((d) => d.allowed).map((d) => d.decision_id));
    }
  })();
  return {
    ids,
    async stop() {
      stopped = true;
      await done;
      await redis.quit();
    },
  };
}

async function inProcessRelay(url: string): Promise<TestingModule> {
  const name = uniqueName('relay-b');
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
      }),
    ],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

describe('relay process', () => {
  let server: PrivateRedis;
  let url: string;
  let redis: Redis;
  let ledger: Ledger;
  let collected: Awaited<ReturnType<typeof collect>>;
  const children: Child[] = [];

  /** Pending entries per consumer, over every stream. */
  const pendingByConsumer = async (): Promise<Map<string, number>> => {
    const total = new Map<string, number>();
    for (const key of outboxes) {
      const consumers = (await redis
        .call('XINFO', 'CONSUMERS', key, RELAY_GROUP)
        .catch(() => [])) as unknown[][];
      for (const flat of consumers) {
        const info = Object.fromEntries(
          Array.from({ length: flat.length / 2 }, (_, i) => [flat[2 * i], flat[2 * i + 1]]),
        );
        total.set(String(info.name), (total.get(String(info.name)) ?? 0) + Number(info.pending));
      }
    }
    return total;
  };
  const outboxLength = async (): Promise<number> =>
    (await Promise.all(outboxes.map((k) => redis.xlen(k)))).reduce((a, b) => a + b, 0);
  /** Decision ids of the entries currently pending in the group. */
  const pendingDecisionIds = async (): Promise<Set<string>> => {
    const ids = new Set<string>();
    for (const key of outboxes) {
      const pending = (await redis.call('XPENDING', key, RELAY_GROUP, '-', '+', 100_000)) as [string][];
      for (const [entryId] of pending) {
        for (const [, flat] of await redis.xrange(key, entryId, entryId)) {
          ids.add((JSON.parse(flat[flat.indexOf('p') + 1]) as { id: string }).id);
        }
      }
    }
    return ids;
  };

  beforeAll(async () => {
    await buildTree(out, ['relay']);
    server = await PrivateRedis.start();
    url = server.url;
    redis = new Redis(url);
    ledger = createLedger({ brokers: testEnv().kafkaBrokers, clientId: run, logLevel: 'error' });
    await ledger.provisioner.ensureTopics(ledgerTopicSpecs({ partitions: 12, replicationFactor: 1 }));
    collected = await collect(ledger);
  });

  afterAll(async () => {
    for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
    await collected?.consumer.disconnect();
    await ledger?.close();
    redis?.disconnect();
    await server?.stop();
    rmSync(out, { recursive: true, force: true });
  });

  it('SIGKILL mid-batch: another relay re-claims the pending entries; nothing is lost', async () => {
    // given: decisions streaming in, published by relay A (a child process)
    const writer = startWriter(url, `${run}-kill`);
    const a = await spawnRelay(url);
    children.push(a);
    await eventually(
      () => collected.ids.length,
      (n) => n >= 300,
      POLL,
    );

    // when: A is killed while it holds entries it has not acknowledged (frozen first, to look)
    let pendingAtKill = 0;
    let inFlight = new Set<string>();
    for (let attempt = 0; attempt < 200 && pendingAtKill === 0; attempt++) {
      a.process.kill('SIGSTOP');
      pendingAtKill = [...(await pendingByConsumer()).values()].reduce((x, y) => x + y, 0);
      if (pendingAtKill === 0) {
        a.process.kill('SIGCONT');
        await sleep(5);
      }
    }
    inFlight = await pendingDecisionIds();
    a.process.kill('SIGKILL');
    await a.exited;
    expect(pendingAtKill).toBeGreaterThan(0);
    const b = await inProcessRelay(url);
    await sleep(1000);
    await writer.stop();

    // then: every decision reached Kafka; only the dead relay's in-flight entries may appear twice
    await eventually(
      () => new Set(collected.ids).size,
      (n) => n >= writer.ids.length,
      POLL,
    );
    await eventually(outboxLength, (n) => n === 0, POLL);
    await collected.caughtUp();
    expect(new Set(collected.ids)).toEqual(new Set(writer.ids));
    const seen = new Map<string, number>();
    for (const id of collected.ids) seen.set(id, (seen.get(id) ?? 0) + 1);
    const twice = [...seen].filter(([, n]) => n > 1).map(([id]) => id);
    expect(twice.filter((id) => !inFlight.has(id))).toEqual([]);
    const metrics = await b.get<Registry>(METRICS_REGISTRY).metrics();
    expect(metrics).toMatch(new RegExp(`^tally_relay_reclaimed_total\\{[^}]*\\} ${pendingAtKill}$`, 'm'));
    await b.close();
  });

  it('SIGTERM: finishes the batch in flight, leaves nothing pending, exits 0; /readyz and /metrics', async () => {
    // given: relay C publishing a stream of decisions
    const before = collected.ids.length;
    const writer = startWriter(url, `${run}-term`);
    const c = await spawnRelay(url);
    children.push(c);
    await eventually(
      () => collected.ids.length - before,
      (n) => n >= 300,
      POLL,
    );
    const ready = (await (await fetch(`http://127.0.0.1:${c.port}/readyz`)).json()) as {
      status: string;
      components: Record<string, { status: string }>;
    };
    expect(ready).toMatchObject({
      status: 'healthy',
      components: { redis: { status: 'up' }, kafka: { status: 'up' } },
    });
    const metrics = await (await fetch(`http://127.0.0.1:${c.port}/metrics`)).text();
    expect(metrics).toMatch(/^tally_outbox_length\{[^}]*\} \d+$/m);
    expect(metrics).toMatch(
      /^tally_relay_events_published_total\{[^}]*topic="tally.usage.v1"[^}]*\} [1-9]\d*$/m,
    );

    // when: SIGTERM while decisions keep coming
    c.process.kill('SIGTERM');
    const code = await c.exited;
    await writer.stop();

    // then: a clean exit, nothing left pending in any consumer
    expect(code).toBe(0);
    expect([...(await pendingByConsumer()).values()].every((n) => n === 0)).toBe(true);
    // and a fresh relay publishes the rest: everything once
    const d = await inProcessRelay(url);
    await eventually(outboxLength, (n) => n === 0, POLL);
    const wanted = new Set(writer.ids);
    await eventually(
      () => collected.ids.filter((id) => wanted.has(id)).length,
      (n) => n >= wanted.size,
      POLL,
    );
    await collected.caughtUp();
    expect(collected.ids.filter((id) => wanted.has(id))).toHaveLength(wanted.size);
    await d.close();
  });
});
