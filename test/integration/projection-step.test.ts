/**
 * apply-batch.lua's per-key writes (HMGET + HSET, ZMSCORE + ZADD) against a REAL Redis: what they
 * store is what HINCRBY / ZINCRBY would (and, for the packed `cost:count` of `keys:` hashes, the
 * exact decimal sums), also for counters beyond a double's integers, fields of one key past the
 * script's chunk size, and values that are not counters. Shared Redis, a namespace of its own.
 */
import {
  ProjectionKeys,
  ProjectionStore,
  createProjectionRedis,
  type ProjectionRedis,
} from '@tally/projections';
import { testEnv, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, type Decision } from './projector.harness';

const T0 = Date.parse('2026-10-05T08:17:00Z');
const H = 3_600_000;

let redis: ProjectionRedis;
let store: ProjectionStore;

beforeAll(() => {
  redis = createProjectionRedis({ mode: 'single', url: testEnv().redisUrl }, 'projection-step-test');
  store = new ProjectionStore(redis, { auditRetentionMs: 24 * H, dedupTtlMs: H });
});

afterAll(async () => {
  await redis?.quit();
});

/** A namespace of this test alone, dropped afterwards by its own keys. */
function namespace(): { keys: ProjectionKeys; drop: () => Promise<void> } {
  const keys = new ProjectionKeys(uniqueName('step').replace(/[^a-z0-9-]/g, ''));
  return {
    keys,
    drop: async () => {
      const found = await redis.keys(keys.all());
      if (found.length > 0) await redis.del(...found);
    },
  };
}

const decision = (tenant: string, key: string, cost: number): Decision => ({
  tenant,
  cost,
  timeMs: T0,
  policies: [{ name: 'p1', mode: 'enforce', key, windows: [] }],
});

describe('apply-batch.lua per-key increments', () => {
  it('stores exactly what HINCRBY would, also past 2^53 and on existing fields', async () => {
    const { keys, drop } = namespace();
    try {
      // given: counters already there, one beyond a double's exact integers
      const minute = keys.keyUsage('acme', 'p1', 'minute', T0);
      const hour = keys.usage('acme', 'hour', T0);
      await redis.hset(minute, 'svc', '9007199254740993:5');
      await redis.hset(keys.keyUsage('acme', 'p1', 'hour', T0), 'svc', '99999999999999999999:1');
      await redis.hset(hour, 'cost:p1', '70368744177664'); // 2^46: just past the script's own sums
      // when
      const events = [decision('acme', 'svc', 1), decision('acme', 'svc', 1), decision('acme', 'other', 1)];
      const outcome = await store.applyBatch(keys.namespace, events.flatMap(eventsOf), []);
      // then
      expect(outcome).toEqual({ applied: 6, duplicates: 0 });
      expect(await redis.hgetall(minute)).toEqual({
        svc: '9007199254740995:7', // a double sum would give …994
        other: '1:1',
      });
      expect(await redis.hget(keys.keyUsage('acme', 'p1', 'hour', T0), 'svc')).toBe(
        '100000000000000000001:3',
      );
      expect(await redis.hgetall(hour)).toEqual({
        'cost:p1': '70368744177667',
        'count:p1': '3',
        'cost:_all': '3',
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
      await store.applyBatch(keys.namespace, events, []);
      // then
      expect(await redis.hlen(day)).toBe(1500);
      expect(await redis.hmget(day, 'k0', 'k999', 'k1000', 'k1499')).toEqual(['2:1', '2:1', '2:1', '12:5']);
    } finally {
      await drop();
    }
  });

  it('fails the step on a stored value HINCRBY refuses, as HINCRBY does', async () => {
    const { keys, drop } = namespace();
    try {
      await redis.hset(keys.usage('bad', 'month', T0), 'cost:_all', 'abc');
      const applying = store.applyBatch(keys.namespace, eventsOf(decision('bad', 'svc', 1)), []);
      await expect(applying).rejects.toThrow(/not an integer/);
    } finally {
      await drop();
    }
  });

  it('fails the step on a per-key value that is not cost:count, before writing anything', async () => {
    const { keys, drop } = namespace();
    try {
      // given
      const minute = keys.keyUsage('bad', 'p1', 'minute', T0);
      await redis.hset(minute, 'svc', '12');
      // when
      const applying = store.applyBatch(keys.namespace, eventsOf(decision('bad', 'svc', 1)), []);
      // then: refused, and not one key of the step written
      await expect(applying).rejects.toThrow(/svc is not cost:count/);
      expect(await redis.keys(keys.all())).toEqual([minute]);
      expect(await redis.hgetall(minute)).toEqual({ svc: '12' });
    } finally {
      await drop();
    }
  });
});
