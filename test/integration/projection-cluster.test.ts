/**
 * A sharded projection namespace on a REAL local Redis Cluster of three masters (started and stopped
 * by this file, docker/local/redis-cluster.sh, by recorded pid) and on a REAL single node (the shared
 * one): the steps of different partitions land on different cluster nodes, each step on the one node
 * that owns its shard's slot; and the queries (usage of a tenant, a policy, a key; top keys; the
 * audit trail, policy reloads included) read every shard and answer exactly what a namespace of one
 * shard on a single node answers for the same events.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  ProjectionNamespaces,
  ProjectionQueries,
  ProjectionStore,
  ShardedStepWriter,
  ProjectionKeys,
} from '@tally/projections';
import { createRedisClient, scanKeys, type RedisClient } from '@tally/redis';
import { freeClusterPorts, testEnv, uniqueName } from '@tally/testing';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, type Decision } from './projector.harness';

/** Ports of the throwaway cluster: free with their bus ports, so it never meets another suite's. */
let PORTS: number[] = [];
const SHARDS = 6;
const H = 3_600_000;
const T0 = Date.parse('2026-10-05T08:00:00Z');
const root = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'tally-projection-cluster-'));
const clusterScript = (...args: string[]): void => {
  execFileSync('bash', ['docker/local/redis-cluster.sh', ...args], { cwd: root, stdio: 'inherit' });
};
const OPTIONS = { auditRetentionMs: 3650 * 24 * H, dedupTtlMs: H };

/**
 * 120 decisions of two tenants over three hours: keys k0..k4 under p1, every third one also under
 * p2, every seventh denied (an audit row), and two policy-set versions (reload rows).
 */
function decisions(): Decision[] {
  return Array.from({ length: 120 }, (_, i) => ({
    tenant: i % 4 === 0 ? 'beta' : 'acme',
    cost: 1 + (i % 5),
    timeMs: T0 + Math.floor((i * 3 * H) / 120),
    policySetVersion: i < 60 ? 'v1' : 'v2',
    ...(i % 7 === 0 ? { outcome: 'denied' as const, reason: 'sustained_quota_exhausted' as const } : {}),
    policies: [
      { name: 'p1', mode: 'enforce' as const, key: `k${i % 5}`, windows: [] },
      ...(i % 3 === 0 ? [{ name: 'p2', mode: 'enforce' as const, key: `k${i % 5}`, windows: [] }] : []),
    ],
  }));
}

describe('a sharded projection namespace on Redis Cluster', () => {
  let cluster: Cluster;
  let single: RedisClient;
  let name = '';
  const oneShard = uniqueName('one').replace(/[^a-z0-9-]/g, '');

  beforeAll(async () => {
    PORTS = await freeClusterPorts(3);
    clusterScript('up', dir, ...PORTS.map(String));
    cluster = createRedisClient(
      { mode: 'cluster', nodes: PORTS.map((port) => ({ host: '127.0.0.1', port })) },
      'worker',
      'projection-cluster-test',
    ) as Cluster;
    single = createRedisClient({ mode: 'single', url: testEnv().redisUrl }, 'worker', 'projection-single');
    // A name whose shards' slots cover all three masters, so the test really spreads them.
    for (let i = 0; name === ''; i++) {
      const candidate = `spread-${i}`;
      const masters = new Set<string>();
      for (let shard = 0; shard < SHARDS; shard++)
        masters.add(await masterOf(new ProjectionKeys(candidate, shard).offsets()));
      if (masters.size === 3) name = candidate;
    }

    // given: the same decisions applied on the cluster in 6 shards, decision i from partition i mod 6
    // (through the projector's own writer), and on the single node in a namespace of one shard
    const all = decisions();
    await new ProjectionNamespaces(cluster).ensureActive(name, SHARDS);
    const writer = new ShardedStepWriter(new ProjectionStore(cluster, OPTIONS), name, SHARDS, 50);
    const next = new Map<number, number>();
    for (const [i, decision] of all.entries()) {
      const partition = i % SHARDS;
      next.set(partition, (next.get(partition) ?? 0) + 1);
      await writer.add(eventsOf(decision), {
        topic: 't',
        partition,
        nextOffset: String(next.get(partition)),
      });
    }
    // one record per decision: 102 usage events and 18 denials (every seventh decision)
    expect(await writer.flush()).toEqual({ applied: 120, duplicates: 0, refused: 0 });
    await new ProjectionNamespaces(single).ensureShards(oneShard, 1);
    await new ProjectionStore(single, OPTIONS).applyBatch(
      { namespace: oneShard, shard: 0 },
      all.flatMap(eventsOf),
      [],
    );
  }, 120_000);

  afterAll(async () => {
    cluster?.disconnect();
    clusterScript('down', dir);
    rmSync(dir, { recursive: true, force: true });
    for (const key of await scanKeys(single, `tally:proj:{${oneShard}*`)) await single.del(key);
    await single.srem('tally:proj:namespaces', oneShard);
    await single?.quit();
  });

  async function masterOf(key: string): Promise<string> {
    const slot = (await cluster.call('CLUSTER', 'KEYSLOT', key)) as number;
    const [host, port] = cluster.slots[slot]?.[0]?.split(':') ?? [];
    return `${host}:${port}`;
  }

  it('writes each shard on the master of its slot: the steps of different partitions on different nodes', async () => {
    const byMaster = new Map<string, number[]>();
    for (let shard = 0; shard < SHARDS; shard++) {
      const master = await masterOf(new ProjectionKeys(name, shard).offsets());
      byMaster.set(master, [...(byMaster.get(master) ?? []), shard]);
    }
    expect(byMaster.size).toBe(3);
    for (const [address, shards] of byMaster) {
      const [host, port] = address.split(':');
      const node = new Redis({ host, port: Number(port), lazyConnect: true });
      try {
        await node.connect();
        // each master holds its own shards' offsets (one partition each) and no other shard's keys
        for (const shard of shards) {
          expect(await node.hgetall(new ProjectionKeys(name, shard).offsets())).toEqual({
            [`t:${shard}`]: '20',
          });
        }
        const own = new Set(shards.map((s) => `{${name}:s${s}}`));
        const keys = await node.keys(`tally:proj:{${name}:s*`);
        expect(keys.length).toBeGreaterThan(0);
        expect(keys.filter((key) => ![...own].some((tag) => key.includes(tag)))).toEqual([]);
      } finally {
        node.disconnect();
      }
    }
    expect((await new ProjectionNamespaces(cluster).storedOffsets(name)).length).toBe(SHARDS);
  });

  it('answers usage, top keys and the audit trail exactly as one shard on a single node does', async () => {
    const now = () => T0 + 30 * 24 * H;
    const sharded = new ProjectionQueries(cluster, now);
    const reference = new ProjectionQueries(single, now);
    const range = { granularity: 'hour', from: '2026-10-05T08:00:00Z', to: '2026-10-05T11:00:00Z' };
    const both = async <T>(ask: (q: ProjectionQueries, ns: string) => Promise<T>): Promise<[T, T]> => [
      await ask(sharded, name),
      await ask(reference, oneShard),
    ];

    for (const tenant of ['acme', 'beta']) {
      for (const scope of [{}, { policy: 'p2' }, { policy: 'p1', key: 'k3' }]) {
        const [a, b] = await both((q, ns) => q.usage(ns, { tenant, ...range, ...scope }));
        expect(a.ok && a.value.total.count).toBeGreaterThan(0);
        expect(stripCursor(a)).toEqual(stripCursor(b));
      }
      const [topA, topB] = await both((q, ns) =>
        q.topKeys(ns, { tenant, policy: 'p1', granularity: 'day', at: '2026-10-05T09:00:00Z' }),
      );
      expect(topA).toEqual(topB);
      expect(topA.ok && topA.value.distinct_keys).toBe(5);
    }
    // the audit trail in pages of 4: denials of each tenant, and the tenant-less reloads (each
    // version once, at the first time any shard met it)
    for (const tenant of ['acme', 'beta', undefined]) {
      const pages = async (q: ProjectionQueries, ns: string) => {
        const rows: unknown[] = [];
        let cursor: string | undefined;
        do {
          const page = await q.audit(ns, {
            ...(tenant === undefined ? {} : { tenant }),
            since: '2026-10-05T00:00:00Z',
            limit: '4',
            ...(cursor === undefined ? {} : { cursor }),
          });
          if (!page.ok) throw new Error(JSON.stringify(page.errors));
          rows.push(...page.value.entries);
          cursor = page.value.next_cursor ?? undefined;
        } while (cursor !== undefined);
        return rows;
      };
      const [a, b] = await both(pages);
      expect(a.length).toBeGreaterThan(tenant === undefined ? 1 : 3);
      expect(a).toEqual(b);
    }
  });

  it('drops every shard of the namespace on every node', async () => {
    const namespaces = new ProjectionNamespaces(cluster);
    await namespaces.ensureActive('other', 1); // registered; `name` stays active until switched
    await namespaces.switchTo('other');
    expect((await namespaces.drop(name)).keys).toBeGreaterThan(SHARDS);
    expect(await scanKeys(cluster, `tally:proj:{${name}*`)).toEqual([]);
  });
});

/** Cursors embed the namespace name (the query's scope): the rest must be equal. */
function stripCursor<T>(result: T): T {
  return JSON.parse(JSON.stringify(result, (k, v: unknown) => (k === 'next_cursor' ? null : v))) as T;
}
