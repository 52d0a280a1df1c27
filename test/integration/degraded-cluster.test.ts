/**
 * Degraded decisions on Redis Cluster when one master stops answering in the middle of a flush: each
 * entry reaches the outbox once. Real: a 3-master cluster this file starts and stops itself
 * (docker/local/redis-cluster.sh, by recorded pid), one master paused with SIGSTOP by its recorded
 * pid (it keeps its connections and answers nothing: the flush's deadline passes for certain, then
 * on SIGCONT it runs the appends it had queued: a write whose reply was lost), the engine and the
 * degraded ledger. Entries are recorded from plans, as the decision service does when Redis failed.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  DegradedLedger,
  EngineService,
  allShardKeys,
  planDecision,
  shardOf,
  type DecisionPlan,
  type EngineOptions,
} from '@tally/engine';
import type { OutboxPayload } from '@tally/events';
import type { PolicySet } from '@tally/policy';
import { createRedisClient } from '@tally/redis';
import { eventually, freeClusterPorts, uniqueName } from '@tally/testing';
import type { Cluster } from 'ioredis';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFailurePolicy } from './backend-failure.fixture';

const SHARDS = 64;
const root = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tally-degraded-cluster-'));
const clusterScript = (...args: string[]): void => {
  execFileSync('bash', ['docker/local/redis-cluster.sh', ...args], { cwd: root, stdio: 'inherit' });
};
/** The pid redis-cluster.sh recorded for the node on `port`: ours, signalled by pid only. */
const pidOf = (port: number): number => Number(readFileSync(join(dir, `${port}.pid`), 'utf8').trim());

describe(`${DegradedLedger.name} on Redis Cluster with a master that stops answering`, () => {
  let ports: number[] = [];
  let cluster: Cluster;
  let engine: EngineService;
  let paused: number | undefined;
  const route = uniqueName('open');
  const policySet: PolicySet = {
    version: 'degraded-cluster',
    policies: [backendFailurePolicy(route, 'fail_open')],
    loadedAt: 0,
  };
  const options: EngineOptions = {
    redis: { mode: 'cluster', nodes: [] },
    shards: SHARDS,
    backendTimeoutMs: 2_000,
    idempotencyTtlMs: 60_000,
    tokenSecret: 'degraded-cluster-secret-0123',
    // never by itself: the test decides when the ledger flushes
    degradedLedger: { probeIntervalMs: 600_000, flushTimeoutMs: 400, batchSize: 500 },
  };

  beforeAll(async () => {
    ports = await freeClusterPorts(3);
    clusterScript('up', dir, ...ports.map(String));
    const redis = { mode: 'cluster' as const, nodes: ports.map((port) => ({ host: '127.0.0.1', port })) };
    cluster = createRedisClient(redis, 'hot-path') as Cluster;
    engine = new EngineService(cluster, { ...options, redis });
    await engine.onModuleInit();
  }, 120_000);

  afterAll(async () => {
    if (paused !== undefined) process.kill(pidOf(paused), 'SIGCONT');
    await engine?.onModuleDestroy();
    clusterScript('down', dir);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The port of the master serving `tenant`'s shard. */
  async function masterOf(tenant: string): Promise<number> {
    const slot = (await cluster.call('CLUSTER', 'KEYSLOT', `{s${shardOf(tenant, SHARDS)}}`)) as number;
    return Number(cluster.slots[slot][0].split(':')[1]);
  }

  /** The decision ids of every outbox entry of every shard, one per entry (so a copy shows twice). */
  async function outboxIds(): Promise<string[]> {
    const ids: string[] = [];
    for (const { outbox } of allShardKeys(SHARDS)) {
      for (const [, flat] of await cluster.xrange(outbox, '-', '+')) {
        const p = flat[flat.indexOf('p') + 1];
        ids.push((JSON.parse(p) as OutboxPayload).id);
      }
    }
    return ids;
  }

  function plan(tenant: string, cost: number): DecisionPlan {
    const r = planDecision(
      { selectors: { tenant, principal: 'p', route }, cost },
      { policySet, tokenSecret: options.tokenSecret, shards: SHARDS, maxCost: 10, decisionId: ulid() },
    );
    if (!r.ok) throw new Error(r.refusal.message);
    return r.plan;
  }

  it('appends each degraded entry once: healthy shards at once, the silent one once after it answers', async () => {
    // given 3 tenants on each master, 4 degraded decisions each, waiting in the ledger
    const tenantsOf = new Map<number, string[]>();
    while ([...tenantsOf.values()].filter((t) => t.length >= 3).length < 3) {
      const tenant = uniqueName('t');
      const group = tenantsOf.get(await masterOf(tenant)) ?? [];
      if (group.length < 3) group.push(tenant);
      tenantsOf.set(await masterOf(tenant), group);
    }
    const ledger = new DegradedLedger(engine, options);
    const recorded = new Map<string, number>();
    for (const [port, tenants] of tenantsOf)
      for (const tenant of tenants)
        for (let i = 0; i < 4; i++) {
          const p = plan(tenant, 1 + i);
          ledger.record(p, 'backend_timeout');
          recorded.set(p.decisionId, port);
        }
    expect(ledger.size).toBe(36);

    // when one master stops answering and the ledger flushes
    const silent = [...tenantsOf.keys()][0];
    const ofSilent = [...recorded].filter(([, port]) => port === silent).map(([id]) => id);
    process.kill(pidOf(silent), 'SIGSTOP');
    paused = silent;
    await ledger.flush();

    // then the healthy masters' entries are in the ledger, and only the silent master's wait
    expect(ledger.size).toBe(ofSilent.length);

    // when the master resumes: it runs the appends it had queued, whose replies the flush gave up on
    process.kill(pidOf(silent), 'SIGCONT');
    paused = undefined;
    await eventually(
      async () => (await outboxIds()).length,
      (n) => n >= recorded.size,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    // and the ledger flushes again: it retries those entries (it cannot know they were written)
    await ledger.flush();
    expect(ledger.size).toBe(0);

    // then every degraded decision is in the outbox exactly once
    const ids = await outboxIds();
    const copies = new Map<string, number>();
    for (const id of ids) copies.set(id, (copies.get(id) ?? 0) + 1);
    const duplicated = [...copies].filter(([, n]) => n > 1);
    expect(duplicated).toEqual([]);
    expect(ids.sort()).toEqual([...recorded.keys()].sort());
  });
});
