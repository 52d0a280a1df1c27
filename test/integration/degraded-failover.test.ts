/**
 * Degraded decisions through a Redis Cluster master kill: every one reaches the outbox at most once.
 * Real: a 3 + 3 cluster started and crashed through docker/local/redis-cluster.sh (by recorded pid,
 * 1 s node timeout), the engine, the decision service and its degraded ledger (flushing by probe
 * and after each success while the traffic runs), traffic over tenants of every master. No relay
 * runs: the outbox streams hold every entry ever appended, so a copy shows as a second entry.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DecisionService,
  DegradedLedger,
  EngineService,
  allShardKeys,
  shardOf,
  type EngineOptions,
} from '@tally/engine';
import type { OutboxPayload } from '@tally/events';
import { createRedisClient } from '@tally/redis';
import { eventually, freeClusterPorts, uniqueName } from '@tally/testing';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, Traffic, acknowledged, failModePolicies } from './redis-failover.harness';

const SHARDS = 64;
const CONCURRENCY = 16;

describe(`${DegradedLedger.name} through a Redis Cluster master kill`, () => {
  let local: LocalCluster | undefined;
  let admin: Cluster;
  let engine: EngineService | undefined;
  let traffic: Traffic | undefined;
  const victims: string[] = [];
  const others: string[] = [];
  let victimSlot = -1;

  beforeAll(async () => {
    const ports = await freeClusterPorts(6);
    local = new LocalCluster(mkdtempSync(join(tmpdir(), 'tally-degraded-failover-')), ports, 1_000);
    await local.up();
    admin = createRedisClient(
      { mode: 'cluster', nodes: ports.map((port) => ({ host: '127.0.0.1', port })) },
      'command',
    ) as Cluster;
    admin.on('error', () => undefined); // the killed node's reconnects; reads below fail loudly
    const masterOfSlot = new Map<number, number>();
    while (victims.length < 8 || others.length < 8) {
      const tenant = uniqueName('t');
      const slot = (await admin.call('CLUSTER', 'KEYSLOT', `{s${shardOf(tenant, SHARDS)}}`)) as number;
      if (victimSlot < 0) victimSlot = slot;
      const master = masterOfSlot.get(slot) ?? (await local.masterOf(slot));
      masterOfSlot.set(slot, master);
      const group = master === masterOfSlot.get(victimSlot) ? victims : others;
      if (group.length < 8) group.push(tenant);
    }
  }, 180_000);

  afterAll(async () => {
    await traffic?.stop();
    await engine?.onModuleDestroy();
    await admin?.quit().catch(() => admin.disconnect());
    await local?.down();
  });

  /** How many outbox entries each decision id has, over every shard (degraded entries only). */
  async function degradedCopies(): Promise<Map<string, number>> {
    const copies = new Map<string, number>();
    for (const { outbox } of allShardKeys(SHARDS))
      for (const [, flat] of await admin.xrange(outbox, '-', '+')) {
        const payload = JSON.parse(flat[flat.indexOf('p') + 1]) as OutboxPayload;
        if (payload.outcome === 'degraded') copies.set(payload.id, (copies.get(payload.id) ?? 0) + 1);
      }
    return copies;
  }

  it('appends each degraded decision once, however its flushes fared during the failover', async () => {
    const cluster = local as LocalCluster;
    const connection = {
      mode: 'cluster' as const,
      nodes: cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
    };
    const options: EngineOptions = {
      redis: connection,
      shards: SHARDS,
      backendTimeoutMs: 300,
      idempotencyTtlMs: 60_000,
      tokenSecret: 'degraded-failover-secret-0123',
      breaker: { failureThreshold: 5, cooldownMs: 200 },
      degradedLedger: { probeIntervalMs: 100, flushTimeoutMs: 300 },
    };
    engine = new EngineService(createRedisClient(connection, 'hot-path'), options);
    await engine.onModuleInit();
    const ledger = new DegradedLedger(engine, options);
    const { set } = failModePolicies(1_000_000_000);
    const sut = new DecisionService(engine, { current: set }, options, undefined, ledger);

    // given traffic on every master
    traffic = new Traffic(sut, [...victims, ...others], CONCURRENCY);
    const running = traffic;
    const ackedOnVictims = (since: number) =>
      running.sent.filter((s) => acknowledged(s) && s.startedAt > since && victims.includes(s.tenant)).length;
    await running.until('100 decisions acknowledged on the victim master', () => ackedOnVictims(0) >= 100);

    // when the victim master is killed, and its replica takes over
    const port = await cluster.masterOf(victimSlot);
    const killedAt = running.now();
    await cluster.kill(port);
    await running.until(
      '100 decisions acknowledged by the promoted replica',
      () => ackedOnVictims(killedAt) >= 100,
      60_000,
    );
    await running.stop();
    // and the ledger has flushed everything it kept
    await eventually(
      () => ledger.size,
      (n) => n === 0,
      { timeoutMs: 20_000, intervalMs: 50, what: 'the degraded ledger to drain' },
    );

    // then no degraded decision is in the outbox twice
    const degraded = running.sent.filter((s) => s.decision.degraded).map((s) => s.decision.decision_id);
    const copies = await degradedCopies();
    const twice = [...copies].filter(([, n]) => n > 1);
    const missing = degraded.filter((id) => !copies.has(id));
    console.log(
      `[degraded-failover] master ${port} killed: ${degraded.length} degraded decisions, ` +
        `${copies.size} in the outbox, ${twice.length} with more than one entry, ${missing.length} missing ` +
        '(appended to the dead master before its replica had them)',
    );
    expect(degraded.length).toBeGreaterThan(0);
    expect(twice).toEqual([]);
    expect([...copies.keys()].every((id) => degraded.includes(id))).toBe(true);
  }, 180_000);
});
