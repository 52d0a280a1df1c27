/**
 * One set of decisions, three ways into projections, against REAL Kafka (this run's topics on the
 * shared broker) and a REAL redis-server of its own:
 * - live: the projector consuming a log written by relays of both contracts — its first half as the
 *   first contract wrote it (every usage event with its `tally.decision.v1` twin, denials and an
 *   override change on the v1 decision topic), its second half as relays write it now (usage alone,
 *   denials and an override change as `tally.decision.v2` on the decision topic), and one denial of
 *   the first half re-drained by a relay of the new contract;
 * - `tally replay` of that same log;
 * - `tally replay` of the same decisions written by the new contract alone.
 * All three must hold the same usage (exact) and the same audit trail, row for row.
 */
import { kafkaKeyOf, overrideEventFromOutbox, type OverrideEventV1 } from '@tally/events';
import { replay } from '@tally/ops';
import { NamespaceKeys, ProjectionNamespaces } from '@tally/projections';
import { createRedisClient, scanKeys, type RedisClient } from '@tally/redis';
import { eventually, PrivateRedis, testEnv } from '@tally/testing';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventsOf,
  eventsOfV1,
  InProcessProjector,
  PROJECTOR_POLL,
  RunTopics,
  type Decision,
} from './projector.harness';

const H = 3_600_000;
const DAY = 24 * H;
const TENANT = 'two-contracts';
const SHADOWED = [
  {
    name: 'p1',
    mode: 'enforce' as const,
    key: 'svc',
    windows: [{ name: 'w', role: 'sustained' as const, limit: 9 }],
  },
  {
    name: 'trial',
    mode: 'shadow' as const,
    key: 'svc',
    windows: [{ name: 'b', role: 'burst' as const, limit: 1 }],
  },
];

/** 60 decisions over the last two hours: allowed, shadow would-denies, degraded, denials. */
function decisions(): Decision[] {
  const start = Math.floor(Date.now() / H) * H - H;
  return Array.from({ length: 60 }, (_, i): Decision => {
    const timeMs = start + i * 60_000;
    // The id is the decision's: every record of it, in either log, carries this one.
    const base = { id: ulid(timeMs), tenant: TENANT, cost: (i % 4) + 1, timeMs, policySetVersion: 'v-two' };
    if (i % 10 === 3) return { ...base, policies: SHADOWED, shadowWouldDeny: true };
    if (i % 10 === 5) return { ...base, outcome: 'degraded', degradedCause: 'backend_timeout' };
    if (i % 10 === 7) return { ...base, outcome: 'denied', reason: 'sustained_quota_exhausted' };
    return base;
  });
}

function overrideChange(timeMs: number, version: number): OverrideEventV1 {
  return overrideEventFromOutbox({
    o: JSON.stringify({
      v: 1,
      id: ulid(timeMs),
      action: 'set',
      policy: 'p1',
      key: 'svc',
      tenant: TENANT,
      set_by: 'ops',
      reason: `change ${version}`,
    }),
    b: '',
    a: `${version};;w=${version}\n{"reason":"change ${version}","set_by":"ops","updated_at":${timeMs}}`,
    n: String(version),
    t: String(timeMs),
  });
}

describe('a log of both event contracts', () => {
  let redis: PrivateRedis;
  let client: RedisClient;
  let mixed: RunTopics;
  let current: RunTopics;
  let live: InProcessProjector | undefined;
  const all = decisions();

  beforeAll(async () => {
    redis = await PrivateRedis.start();
    client = createRedisClient({ mode: 'single', url: redis.url }, 'command');
    mixed = new RunTopics(testEnv().kafkaBrokers, 'two-contracts-mixed');
    current = new RunTopics(testEnv().kafkaBrokers, 'two-contracts-new');
    await Promise.all([mixed.create(), current.create()]);
    const [first, second] = [all.slice(0, 30), all.slice(30)];
    const changes = [overrideChange(first[10].timeMs + 1, 1), overrideChange(second[10].timeMs + 1, 2)];
    const send = (run: RunTopics, topic: string, change: OverrideEventV1) =>
      run.ledger.producer.send(topic, [{ key: kafkaKeyOf(change), value: JSON.stringify(change) }]);
    // the mixed log: the first half by relays of the first contract, the second by today's
    await mixed.produce(first.flatMap(eventsOfV1));
    await send(mixed, mixed.topics.decisionV1, changes[0]);
    await mixed.produce(second.flatMap(eventsOf));
    await send(mixed, mixed.topics.decision, changes[1]);
    // and a denial of the first half re-drained, during the upgrade, by a relay of the new contract
    await mixed.produce(eventsOf(first.find((d) => d.outcome === 'denied')!));
    // the same decisions as today's relays write them
    await current.produce(all.flatMap(eventsOf));
    for (const change of changes) await send(current, current.topics.decision, change);
  }, 120_000);

  afterAll(async () => {
    await live?.stop();
    await mixed?.close();
    await current?.close();
    await client?.quit();
    await redis?.stop();
  });

  /** Every key of a namespace but its meta and offsets (whose topic names differ), by content. */
  const dump = async (namespace: string): Promise<Record<string, unknown>> => {
    const out: Record<string, unknown> = {};
    for (const key of await scanKeys(client, new NamespaceKeys(namespace).allShards())) {
      const name = key.replace(`{${namespace}:`, '{ns:');
      if (name.endsWith(':meta') || name.endsWith(':offsets')) continue;
      const type = await client.type(key);
      if (type === 'hash') out[name] = await client.hgetall(key);
      else if (type === 'zset') out[name] = await client.zrange(key, 0, '-1', 'WITHSCORES');
      else if (type === 'set') out[name] = (await client.smembers(key)).sort();
    }
    return out;
  };

  it('projects live, and replays, to the same usage and audit as the new contract alone', async () => {
    // given the live projector on the mixed log, settled: every decision and change applied once
    live = await InProcessProjector.start(redis.url, testEnv().kafkaBrokers, mixed.overrides);
    const applied = all.length + 2;
    await eventually(
      async () => (await new ProjectionNamespaces(client).list()).find((n) => n.name === 'live')?.events,
      (n) => n === applied,
      { ...PROJECTOR_POLL, what: `${applied} events applied live` },
    );
    // when both logs are replayed
    const replayed = await replay(
      { ledger: mixed.ledger, redis: client },
      {
        namespace: 'mixed',
        from: 'earliest',
        to: 'latest',
        topics: mixed.topics,
        auditRetentionMs: 30 * DAY,
      },
    );
    await replay(
      { ledger: current.ledger, redis: client },
      {
        namespace: 'new',
        from: 'earliest',
        to: 'latest',
        topics: current.topics,
        auditRetentionMs: 30 * DAY,
      },
    );
    // then every decision was applied once: 30 v1 twins of allowed/degraded decisions skipped, the
    // re-drained denial a duplicate
    expect(replayed).toMatchObject({ applied, duplicates: 1, invalid: 0 });
    // and the three namespaces hold the same cells, audit rows and dedup marks
    const [fromLive, fromMixed, fromNew] = [await dump('live'), await dump('mixed'), await dump('new')];
    expect(fromMixed).toEqual(fromNew);
    expect(fromLive).toEqual(fromNew);
    // and that is exact usage and the whole audit trail
    const body = await live.get<{ total: { cost: number; count: number } }>(
      `/v1/usage?tenant=${TENANT}&granularity=day&from=${new Date(all[0].timeMs - DAY).toISOString()}&to=${new Date(Date.now() + DAY).toISOString()}`,
    );
    const spent = all.filter((d) => d.outcome !== 'denied');
    expect(body.body.total).toEqual({ cost: spent.reduce((s, d) => s + d.cost, 0), count: spent.length });
    const audit = await live.get<{ entries: { type: string }[] }>(
      `/v1/audit?tenant=${TENANT}&since=${new Date(all[0].timeMs - H).toISOString()}&limit=200`,
    );
    const types = audit.body.entries.map((e) => e.type);
    expect(types.filter((t) => t === 'denied')).toHaveLength(6);
    expect(types.filter((t) => t === 'degraded')).toHaveLength(6);
    expect(types.filter((t) => t === 'would_deny')).toHaveLength(6);
    expect(types.filter((t) => t === 'override')).toHaveLength(2);
  });
});
