/**
 * Redis Cluster: the same decisions give the same results on a real local 3-master cluster as on a
 * single node. Real: the shared single Redis (database 13) and a cluster of three redis-server
 * processes that this file starts and stops itself (docker/local/redis-cluster.sh, by recorded pid).
 * Each decision's keys share one {s<N>} hash tag, so each script runs on one slot; tenants spread
 * the decisions over every master.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  DecisionService,
  EngineService,
  allShardKeys,
  shardOf,
  type Decision,
  type DecisionRequest,
  type EngineOptions,
} from '@tally/engine';
import type { Policy, PolicySet, WindowSpec } from '@tally/policy';
import { createRedisClient } from '@tally/redis';
import { freeClusterPorts, testEnv, uniqueName, testPolicy } from '@tally/testing';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Free with their bus ports, so the cluster never meets another suite's or a local one. */
let PORTS: number[] = [];
const SHARDS = 64;
const root = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tally-engine-cluster-'));
const clusterScript = (...args: string[]): void => {
  execFileSync('bash', ['docker/local/redis-cluster.sh', ...args], { cwd: root, stdio: 'inherit' });
};

const windows: WindowSpec[] = [
  { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 5, periodMs: 1_000 },
  { name: 'minute', role: 'sustained', algorithm: 'sliding_window', limit: 12, periodMs: 60_000 },
  { name: 'month', role: 'sustained', algorithm: 'calendar_month', limit: 40, periodMs: 31 * 86_400_000 },
];
function policy(name: string, over: Partial<Policy> = {}): Policy {
  return testPolicy(name, { windows, maxCost: 5, onBackendFailure: 'fail_closed', ...over });
}

/** A decision without what differs by construction between two runs (ids). */
function comparable(d: Decision): Omit<Decision, 'decision_id'> {
  const { decision_id: _id, ...rest } = d;
  return rest;
}

describe(`${DecisionService.name} on Redis Cluster`, () => {
  let single: Redis;
  let cluster: Cluster;
  let fixedNow: number | undefined;
  const set: PolicySet = {
    version: 'cluster',
    policies: [
      policy(uniqueName('cl')),
      policy(uniqueName('shadow'), { mode: 'shadow', key: ['tenant'], maxCost: 100 }),
    ],
    loadedAt: 0,
  };
  const services: DecisionService[] = [];
  const engines: EngineService[] = [];

  beforeAll(async () => {
    PORTS = await freeClusterPorts(3);
    clusterScript('up', dir, ...PORTS.map(String));
    const url = new URL(testEnv().redisUrl);
    url.pathname = '/13';
    const base = {
      shards: SHARDS,
      backendTimeoutMs: 2_000,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'cluster-secret-0123456789',
      scriptNow: () => fixedNow,
    };
    const singleOptions: EngineOptions = { ...base, redis: { mode: 'single', url: url.toString() } };
    const clusterOptions: EngineOptions = {
      ...base,
      redis: { mode: 'cluster', nodes: PORTS.map((port) => ({ host: '127.0.0.1', port })) },
    };
    single = createRedisClient(singleOptions.redis, 'hot-path') as Redis;
    cluster = createRedisClient(clusterOptions.redis, 'hot-path') as Cluster;
    for (const [client, options] of [
      [single, singleOptions],
      [cluster, clusterOptions],
    ] as const) {
      const engine = new EngineService(client, options);
      await engine.onModuleInit();
      engines.push(engine);
      services.push(new DecisionService(engine, { current: set }, options));
    }
  }, 120_000);

  afterAll(async () => {
    await Promise.all(engines.map((e) => e.onModuleDestroy()));
    clusterScript('down', dir);
    rmSync(dir, { recursive: true, force: true });
    const cleanup = new Redis(new URL('/13', testEnv().redisUrl).toString());
    await cleanup.del(...allShardKeys(SHARDS).flatMap((k) => [k.outbox, k.denials]));
    await cleanup.quit();
  });

  it('gives the same decisions as a single node, over tenants spread across all masters', async () => {
    const [onSingle, onCluster] = services;
    // given: 4 tenants whose shard lives on each master (drawn until every master has its 4), so the
    // comparison really exercises slot routing on all three
    const perMaster = new Map<string, string[]>();
    while ([...perMaster.values()].filter((t) => t.length >= 4).length < 3) {
      const tenant = uniqueName('t');
      const slot = (await cluster.call('CLUSTER', 'KEYSLOT', `{s${shardOf(tenant, SHARDS)}}`)) as number;
      const master = cluster.slots[slot][0];
      const group = perMaster.get(master) ?? [];
      if (group.length < 4) group.push(tenant);
      perMaster.set(master, group);
    }
    const tenants = [...perMaster.values()].flat();
    const nodesUsed = new Set(perMaster.keys());
    expect(nodesUsed.size).toBe(3);

    // rounds 3 and 4 share an idempotency key: round 4 has another cost, so it conflicts (409)
    const requests: DecisionRequest[] = [];
    for (let round = 0; round < 8; round++) {
      for (const tenant of tenants) {
        const idempotency_key = round === 3 || round === 4 ? 'same' : undefined;
        requests.push({ selectors: { tenant, principal: 'p' }, cost: (round % 3) + 1, idempotency_key });
      }
    }
    requests.push(
      ...tenants.map((tenant) => ({
        selectors: { tenant, principal: 'p' },
        cost: 1,
        idempotency_key: 'same',
      })),
    );
    // the run crosses midnight at the end of November: the calendar-month window rolls over midway
    let now = Date.UTC(2026, 10, 30, 23, 59, 58, 500);
    const statuses = new Set<string>();
    for (const request of requests) {
      now += 37;
      fixedNow = now;
      const [a, b] = [await onSingle.decide(request), await onCluster.decide(request)];
      expect(comparable(b)).toEqual(comparable(a));
      statuses.add(b.replayed ? 'replayed' : b.kind);
    }
    // every kind of outcome was compared, not just easy allows
    expect([...statuses].sort()).toEqual(['allowed', 'conflict', 'denied', 'replayed']);

    // a batch on Cluster runs one pipeline per shard and keeps the request order
    fixedNow = now + 500;
    const batch = tenants
      .slice(0, 3)
      .flatMap((tenant) =>
        Array.from({ length: 6 }, () => ({ selectors: { tenant, principal: 'q' }, cost: 2 })),
      );
    const [batchA, batchB] = [await onSingle.decideBatch(batch), await onCluster.decideBatch(batch)];
    expect(batchB.map(comparable)).toEqual(batchA.map(comparable));
    expect(batchB.map((d) => d.kind)).toEqual(
      [0, 1, 2].flatMap(() => ['allowed', 'allowed', 'denied', 'denied', 'denied', 'denied']),
    );

    // and the outbox of one shard holds that shard's allowed decisions
    const shard = shardOf(tenants[0], SHARDS);
    expect(await cluster.xlen(`tally:v1:{s${shard}}:outbox`)).toBeGreaterThan(0);
  });

  it('writes the decisions of one turn with one socket write per master, answered in issue order', async () => {
    const [, onCluster] = services;
    // given: a tenant on each master, and each master's socket counted
    const byMaster = new Map<string, string>();
    while (byMaster.size < 3) {
      const tenant = uniqueName('turn');
      const slot = (await cluster.call('CLUSTER', 'KEYSLOT', `{s${shardOf(tenant, SHARDS)}}`)) as number;
      if (!byMaster.has(cluster.slots[slot][0])) byMaster.set(cluster.slots[slot][0], tenant);
    }
    const writes = cluster.nodes('master').map(countWrites);
    fixedNow = Date.UTC(2026, 11, 2, 10, 0, 0);

    // when: 8 decisions per tenant of cost 2 against a burst of 5, all issued in one turn
    const tenants = [...byMaster.values()];
    const decisions = await Promise.all(
      tenants.flatMap((tenant) =>
        Array.from({ length: 8 }, () => onCluster.decide({ selectors: { tenant, principal: 'w' }, cost: 2 })),
      ),
    );

    // then: one write per master, and each tenant's first two (in issue order) were the allowed ones
    expect(writes.map((count) => count())).toEqual([1, 1, 1]);
    expect(decisions.map((d) => d.kind)).toEqual(
      tenants.flatMap(() => ['allowed', 'allowed', ...Array<string>(6).fill('denied')]),
    );
  });
});

/** Calls of a node socket's write methods from now on (each hands the kernel one write or writev). */
function countWrites(node: Redis): () => number {
  const socket = node.stream as unknown as Record<'_write' | '_writev', (...a: unknown[]) => void>;
  let writes = 0;
  for (const method of ['_write', '_writev'] as const) {
    const original = socket[method].bind(socket);
    socket[method] = (...a: unknown[]) => {
      writes++;
      original(...a);
    };
  }
  return () => writes;
}
