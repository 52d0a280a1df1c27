/**
 * apply-batch.lua against a REAL Redis (shared; each test in a namespace of its own): what a step
 * stores is the exact sum, up to 2^53 − 1 and never past it, for fields of one key past the script's
 * chunk size too; and a step is all-or-nothing in fact (issue 9): every check runs before the first
 * write, so a step meeting a sum that would pass 2^53 − 1, a hand-corrupted stored value or a key of
 * the wrong type writes nothing, names its culprits, and the store re-runs it without them — the
 * bystanders of the same step exact, the culprits handed to the refusal sink with their reason, and
 * never marked applied. A namespace-wide key that is unusable fails the step with nothing written.
 */
import {
  NamespaceKeys,
  ProjectionKeys,
  ProjectionNamespaces,
  ProjectionQueries,
  ProjectionStore,
  UNMATCHED_POLICY,
  dedupTokenOf,
  type RefusedEvent,
} from '@tally/projections';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { testEnv, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, type Decision } from './projector.harness';

const T0 = Date.parse('2026-10-05T08:17:00Z');
const H = 3_600_000;
const MAX = Number.MAX_SAFE_INTEGER;

let redis: RedisClient;
let store: ProjectionStore;

beforeAll(() => {
  redis = createRedisClient({ mode: 'single', url: testEnv().redisUrl }, 'worker', 'projection-step-test');
  store = new ProjectionStore(redis, { auditRetentionMs: 24 * H, dedupTtlMs: H });
});

afterAll(async () => {
  await redis?.quit();
});

/**
 * A namespace of this test alone (one shard: every step of this file goes to shard 0), dropped
 * afterwards by its own keys.
 */
function namespace(): { keys: ProjectionKeys; drop: () => Promise<void> } {
  const name = uniqueName('step').replace(/[^a-z0-9-]/g, '');
  const keys = new ProjectionKeys(name, 0);
  const wide = new NamespaceKeys(name);
  return {
    keys,
    drop: async () => {
      const found = [...(await redis.keys(keys.all())), ...(await redis.keys(wide.all()))];
      for (const key of found) await redis.del(key);
    },
  };
}

const decision = (tenant: string, key: string, cost: number): Decision => ({
  tenant,
  cost,
  timeMs: T0,
  policies: [{ name: 'p1', mode: 'enforce', key, windows: [] }],
});

/** A refusal sink that keeps what it is handed. */
function sink(): { refused: RefusedEvent[]; take: (list: readonly RefusedEvent[]) => Promise<void> } {
  const refused: RefusedEvent[] = [];
  return { refused, take: (list) => Promise.resolve(void refused.push(...list)) };
}

/** Every key of the namespace with its value, whatever its type: a snapshot to compare before/after. */
async function snapshot(keys: ProjectionKeys): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await redis.keys(keys.all())).sort()) {
    const type = await redis.type(key);
    out[key] =
      type === 'hash'
        ? await redis.hgetall(key)
        : type === 'set'
          ? (await redis.smembers(key)).sort()
          : type === 'zset'
            ? await redis.zrange(key, 0, '-1', 'WITHSCORES')
            : await redis.get(key);
  }
  return out;
}

describe('apply-batch.lua sums', () => {
  it('stores exact sums on existing fields, up to 2^53 − 1', async () => {
    const { keys, drop } = namespace();
    try {
      // given: counters already near the bound, where a double sum of larger values would round
      const minute = keys.keyUsage('acme', 'p1', 'minute', T0);
      const hour = keys.usage('acme', 'hour', T0);
      await redis.hset(minute, 'svc', '9007199254740980:5');
      await redis.hset(hour, 'cost:p1', '9007199254740000');
      // when
      const events = [decision('acme', 'svc', 1), decision('acme', 'svc', 10), decision('acme', 'other', 1)];
      const outcome = await store.applyBatch(keys, events.flatMap(eventsOf), []);
      // then
      expect(outcome).toEqual({ applied: 3, duplicates: 0, refused: 0 });
      expect(await redis.hgetall(minute)).toEqual({ svc: '9007199254740991:7', other: '1:1' });
      expect(await redis.hgetall(hour)).toEqual({
        'cost:p1': '9007199254740012',
        'count:p1': '3',
        'cost:_all': '12',
        'count:_all': '3',
      });
    } finally {
      await drop();
    }
  });

  it('writes every field of a key with more fields than one script command takes', async () => {
    const { keys, drop } = namespace();
    try {
      // given: 1500 keys of one tenant and policy: 1500 fields of one hash
      const day = keys.keyUsage('wide', 'p1', 'day', T0);
      await redis.hset(day, 'k1499', '10:4');
      const events = Array.from({ length: 1500 }, (_, i) => eventsOf(decision('wide', `k${i}`, 2))).flat();
      // when
      await store.applyBatch(keys, events, []);
      // then
      expect(await redis.hlen(day)).toBe(1500);
      expect(await redis.hmget(day, 'k0', 'k999', 'k1000', 'k1499')).toEqual(['2:1', '2:1', '2:1', '12:5']);
    } finally {
      await drop();
    }
  });

  it('two unmatched decisions of cost 2^53−1: the second is refused, usage stays readable and exact', async () => {
    const { keys, drop } = namespace();
    try {
      // given one unmatched decision of cost 2^53−1 applied, then a second one in a later step
      const unmatched = (): Decision => ({ tenant: 'whale', cost: MAX, timeMs: T0, policies: [] });
      const first = await store.applyBatch(keys, eventsOf(unmatched()), []);
      const { refused, take } = sink();
      const second = await store.applyBatch(keys, eventsOf(unmatched()), [], take);
      // then the first counts, the second (its one record) is refused
      expect(first).toEqual({ applied: 1, duplicates: 0, refused: 0 });
      expect(second).toEqual({ applied: 0, duplicates: 0, refused: 1 });
      expect(refused.map((r) => [r.index, r.event.type, r.reason])).toEqual([
        [
          0,
          'tally.usage.v1',
          expect.stringMatching(/^overflow: .* would exceed 9007199254740991/) as unknown,
        ],
      ]);
      // and the usage query answers exactly, never projection.corrupt
      await new ProjectionNamespaces(redis).ensureShards(keys.namespace, 1);
      const queries = new ProjectionQueries(redis, () => T0 + H);
      const usage = await queries.usage(keys.namespace, {
        tenant: 'whale',
        granularity: 'hour',
        from: '2026-10-05T08:00:00Z',
        to: '2026-10-05T09:00:00Z',
      });
      expect(usage).toMatchObject({
        ok: true,
        value: {
          buckets: [{ policy: UNMATCHED_POLICY, cost: MAX, count: 1 }],
          total: { cost: MAX, count: 1 },
        },
      });
    } finally {
      await drop();
    }
  });
});

describe('usage queries over exact sums', () => {
  it('answers a range whose total would pass 2^53 − 1 with a 400 error, never a rounded number', async () => {
    const { keys, drop } = namespace();
    try {
      // given two months of tenant big, each at the bound
      const months = [T0, Date.parse('2026-11-05T08:17:00Z')];
      for (const timeMs of months) {
        await store.applyBatch(keys, eventsOf({ tenant: 'big', cost: MAX, timeMs, policies: [] }), []);
      }
      await new ProjectionNamespaces(redis).ensureShards(keys.namespace, 1);
      const queries = new ProjectionQueries(redis, () => Date.parse('2026-12-01T00:00:00Z'));
      const range = (from: string, to: string) =>
        queries.usage(keys.namespace, { tenant: 'big', granularity: 'month', from, to });
      // when / then: one month is exact; both together cannot be
      expect(await range('2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z')).toMatchObject({
        ok: true,
        value: { total: { cost: MAX, count: 1 } },
      });
      expect(await range('2026-10-01T00:00:00Z', '2026-12-01T00:00:00Z')).toEqual({
        ok: false,
        errors: [{ field: 'from', message: expect.stringContaining('exceeds 9007199254740991') as unknown }],
      });
    } finally {
      await drop();
    }
  });
});

describe('usage queries over the shards of a namespace', () => {
  it('sums one bucket over shards exactly up to 2^53 − 1, and refuses a bucket whose shards pass it', async () => {
    const { keys, drop } = namespace();
    const other = new ProjectionKeys(keys.namespace, 1);
    try {
      // given: a namespace of 2 shards, tenant big's October in shard 0 (2^53 − 2) and shard 1 (1),
      // its November in shard 0 (2^53 − 1) and shard 1 (1)
      await new ProjectionNamespaces(redis).ensureShards(keys.namespace, 2);
      const nov = Date.parse('2026-11-05T08:17:00Z');
      const bill = (shard: ProjectionKeys, cost: number, timeMs: number) =>
        store.applyBatch(shard, eventsOf({ tenant: 'big', cost, timeMs, policies: [] }), []);
      await bill(keys, MAX - 1, T0);
      await bill(other, 1, T0);
      await bill(keys, MAX, nov);
      await bill(other, 1, nov);
      const queries = new ProjectionQueries(redis, () => Date.parse('2026-12-01T00:00:00Z'));
      const range = (from: string, to: string) =>
        queries.usage(keys.namespace, { tenant: 'big', granularity: 'month', from, to });
      // when / then: October sums to the bound exactly, from both shards
      expect(await range('2026-10-01T00:00:00Z', '2026-11-01T00:00:00Z')).toMatchObject({
        ok: true,
        value: {
          buckets: [{ policy: UNMATCHED_POLICY, cost: MAX, count: 2 }],
          total: { cost: MAX, count: 2 },
        },
      });
      // November's one bucket passes it over its shards: refused, never rounded
      expect(await range('2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z')).toEqual({
        ok: false,
        errors: [{ field: 'from', message: expect.stringContaining('exceeds 9007199254740991') as unknown }],
      });
    } finally {
      await drop();
      for (const key of await redis.keys(other.all())) await redis.del(key);
    }
  });
});

describe('apply-batch.lua all-or-nothing steps (issue 9)', () => {
  it('refuses exactly the events that would take a sum past 2^53 − 1, in order, and applies the rest', async () => {
    const { keys, drop } = namespace();
    try {
      // given: tenant edge's month total 10 below the bound; a bystander in the same step
      const month = keys.usage('edge', 'month', T0);
      await redis.hset(month, 'cost:_all', String(MAX - 10), 'count:_all', '3');
      const edge = [4, 7, 5, 1].map((cost) => decision('edge', 'svc', cost));
      const calm = [3, 8].map((cost) => decision('calm', 'svc', cost));
      const events = [edge[0], calm[0], edge[1], edge[2], calm[1], edge[3]].flatMap(eventsOf);
      const { refused, take } = sink();
      // when
      const outcome = await store.applyBatch(keys, events, [], take);
      // then: 4 fits, 7 would pass (6 left), 5 and then 1 fit exactly to the bound
      expect(outcome).toEqual({ applied: 5, duplicates: 0, refused: 1 });
      expect(refused).toEqual([
        {
          index: 2,
          event: events[2],
          reason: expect.stringMatching(
            /^overflow: the usage of policy _all \(tenant "edge"\) in the month bucket of 2026-10-01T00:00:00Z would exceed 9007199254740991 \(cost stored 9007199254740981, earlier in the step 4, this event 7\)$/,
          ) as unknown,
        },
      ]);
      expect(await redis.hmget(month, 'cost:_all', 'count:_all', 'cost:p1')).toEqual([
        String(MAX),
        '6',
        '10',
      ]);
      // and the bystander is exact, the culprit is not marked applied (a redelivery meets it again)
      expect(await redis.hgetall(keys.usage('calm', 'hour', T0))).toEqual({
        'cost:p1': '11',
        'count:p1': '2',
        'cost:_all': '11',
        'count:_all': '2',
      });
      const ids = await redis.smembers(keys.ids(T0));
      expect(ids).toHaveLength(5);
      expect(ids).not.toContain(dedupTokenOf(events[2]));
      const again = sink();
      expect(await store.applyBatch(keys, events, [], again.take)).toEqual({
        applied: 0,
        duplicates: 5,
        refused: 1,
      });
      expect(again.refused.map((r) => r.index)).toEqual([2]);
    } finally {
      await drop();
    }
  });

  it('refuses the events of a hand-corrupted stored value, writes nothing of theirs, applies the rest', async () => {
    const { keys, drop } = namespace();
    try {
      // given: a usage total that is not a number, and a per-key value that is not cost:count
      await redis.hset(keys.usage('bad', 'month', T0), 'cost:_all', 'abc');
      await redis.hset(keys.keyUsage('worse', 'p1', 'minute', T0), 'svc', '12');
      const before = await snapshot(keys);
      const events = [
        decision('bad', 'svc', 1),
        decision('calm', 'svc', 2),
        decision('worse', 'svc', 3),
        decision('worse', 'other', 4),
      ].flatMap(eventsOf);
      const { refused, take } = sink();
      // when
      const outcome = await store.applyBatch(
        keys,
        events,
        [{ topic: 't', partition: 0, nextOffset: '9' }],
        take,
      );
      // then: only the usage of the two cells in question is refused, with reasons naming them
      expect(outcome).toEqual({ applied: 2, duplicates: 0, refused: 2 });
      expect(refused.map((r) => [r.index, r.reason])).toEqual([
        [
          0,
          expect.stringMatching(
            /^corrupt: .*usage:bad:month:20261001T0000Z field "cost:_all" holds "abc"/,
          ) as unknown,
        ],
        [
          2,
          expect.stringMatching(
            /^corrupt: .*keys:worse:p1:minute:20261005T0817Z field "svc" holds "12"/,
          ) as unknown,
        ],
      ]);
      // and nothing of the culprits was written: their cells are as they were, or absent
      const after = await snapshot(keys);
      expect(after[keys.usage('bad', 'month', T0)]).toEqual(before[keys.usage('bad', 'month', T0)]);
      expect(after[keys.usage('bad', 'hour', T0)]).toBeUndefined();
      expect(after[keys.keyUsage('worse', 'p1', 'minute', T0)]).toEqual({ svc: '12', other: '4:1' });
      expect(after[keys.usage('worse', 'minute', T0)]).toEqual({
        'cost:p1': '4',
        'count:p1': '1',
        'cost:_all': '4',
        'count:_all': '1',
      });
      expect(after[keys.usage('calm', 'month', T0)]).toEqual({
        'cost:p1': '2',
        'count:p1': '1',
        'cost:_all': '2',
        'count:_all': '1',
      });
      expect(after[keys.offsets()]).toEqual({ 't:0': '9' });
    } finally {
      await drop();
    }
  });

  it('refuses the events of a key of the wrong type (a WRONGTYPE), and applies the rest', async () => {
    const { keys, drop } = namespace();
    try {
      // given: a usage hash and an audit trail that are plain strings
      await redis.set(keys.usage('wt', 'day', T0), 'oops');
      await redis.set(keys.audit('deny'), 'oops');
      const denied: Decision = {
        ...decision('deny', 'svc', 1),
        outcome: 'denied',
        reason: 'burst_quota_exhausted',
      };
      const events = [decision('wt', 'svc', 5), denied, decision('calm', 'svc', 2)].flatMap(eventsOf);
      const { refused, take } = sink();
      // when
      const outcome = await store.applyBatch(keys, events, [], take);
      // then: wt's usage event and deny's denial (its audit row) are the culprits
      expect(outcome).toEqual({ applied: 1, duplicates: 0, refused: 2 });
      expect(refused.map((r) => [r.index, r.event.type, r.reason])).toEqual([
        [
          0,
          'tally.usage.v1',
          expect.stringMatching(/^wrongtype: .*usage:wt:day:20261005T0000Z is not a hash$/) as unknown,
        ],
        [
          1,
          'tally.decision.v2',
          expect.stringMatching(/^wrongtype: .*audit:deny is not a sorted set$/) as unknown,
        ],
      ]);
      expect(await redis.get(keys.usage('wt', 'day', T0))).toBe('oops');
      expect(await redis.exists(keys.usage('wt', 'month', T0))).toBe(0);
      expect(await redis.hmget(keys.usage('calm', 'day', T0), 'cost:_all', 'count:_all')).toEqual(['2', '1']);
    } finally {
      await drop();
    }
  });

  it('fails the step with nothing written when a namespace-wide key is unusable, and applies it once repaired', async () => {
    const { keys, drop } = namespace();
    try {
      // given: the offsets hash is a string (no event can be blamed: the script errors)
      await redis.set(keys.offsets(), 'oops');
      const events = [decision('acme', 'svc', 3), decision('calm', 'svc', 2)].flatMap(eventsOf);
      const offsets = [{ topic: 't', partition: 0, nextOffset: '4' }];
      // when
      await expect(store.applyBatch(keys, events, offsets)).rejects.toThrow(
        /apply-batch: .*offsets is not a hash/,
      );
      // then: not one key was written
      expect(await redis.keys(keys.all())).toEqual([keys.offsets()]);
      // and once repaired, the same step applies, exactly once
      await redis.del(keys.offsets());
      expect(await store.applyBatch(keys, events, offsets)).toEqual({
        applied: 2,
        duplicates: 0,
        refused: 0,
      });
      expect(await store.applyBatch(keys, events, offsets)).toEqual({
        applied: 0,
        duplicates: 2,
        refused: 0,
      });
      expect(await redis.hmget(keys.usage('acme', 'month', T0), 'cost:_all', 'count:_all')).toEqual([
        '3',
        '1',
      ]);
      expect(await redis.hgetall(keys.offsets())).toEqual({ 't:0': '4' });
    } finally {
      await drop();
    }
  });

  it('a refusal sink that fails fails the step: nothing written, nothing marked', async () => {
    const { keys, drop } = namespace();
    try {
      await redis.hset(keys.usage('bad', 'hour', T0), 'count:p1', '-1');
      const before = await snapshot(keys);
      const events = [decision('bad', 'svc', 1), decision('calm', 'svc', 1)].flatMap(eventsOf);
      const failing = () => Promise.reject(new Error('dead-letter topic unreachable'));
      await expect(store.applyBatch(keys, events, [], failing)).rejects.toThrow(/unreachable/);
      expect(await snapshot(keys)).toEqual(before);
    } finally {
      await drop();
    }
  });
});
