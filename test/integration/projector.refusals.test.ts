/**
 * A projection step is all-or-nothing in fact (issue 9), through the whole projector: REAL Kafka
 * (topics of one partition, so every tenant's events share batches and steps) and a REAL
 * redis-server of this suite alone. Each failure is injected by hand into the namespace:
 * - a script error (the namespace's meta hash is a string): every step fails with nothing written,
 *   the projector retries from its stored offsets, and once repaired applies everything once;
 * - a hand-corrupted stored value, a key of the wrong type, sums that would pass 2^53 − 1 (near the
 *   bound, and two unmatched decisions of cost 2^53 − 1): exactly the events that cannot be applied
 *   go to the dead-letter topic, each once, with its reason and origin; the bystanders of the same
 *   steps have exact totals; every other event is applied once.
 */
import { eventually, PrivateRedis, testEnv } from '@tally/testing';
import { NamespaceKeys, ProjectionKeys } from '@tally/projections';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventsOf,
  InProcessProjector,
  PROJECTOR_POLL,
  RunTopics,
  type Decision,
  type ReadRecord,
} from './projector.harness';

const MAX = Number.MAX_SAFE_INTEGER;
const T0 = Date.parse('2026-10-05T08:17:00Z');
const MONTH = 'granularity=month&from=2026-10-01T00:00:00Z&to=2026-11-01T00:00:00Z';
/** RunTopics of one partition: `live` has one shard, which every step writes. */
const keys = new ProjectionKeys('live', 0);

interface UsageBody {
  total: { cost: number; count: number };
  buckets: { policy: string; cost: number; count: number }[];
}

let redis: PrivateRedis;
let run: RunTopics;
let sut: InProcessProjector;
const brokers = (): string[] => testEnv().kafkaBrokers;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  run = new RunTopics(brokers(), 'it-refusals', 1);
  await run.create();
  sut = await InProcessProjector.start(redis.url, brokers(), run.overrides);
  // The namespace exists once the member has joined; the failures are injected into it.
  await eventually(
    () => redis.client.hget(new NamespaceKeys('live').meta(), 'shards'),
    (n) => n === '1',
    { ...PROJECTOR_POLL, what: 'the live namespace' },
  );
});

afterAll(async () => {
  await sut?.stop();
  await run?.close();
  await redis?.stop();
});

const decision = (tenant: string, cost: number, policies?: Decision['policies']): Decision => ({
  id: ulid(T0),
  tenant,
  cost,
  timeMs: T0,
  ...(policies === undefined ? {} : { policies }),
});

async function usage(tenant: string): Promise<{ status: number; body: UsageBody }> {
  return sut.get<UsageBody>(`/v1/usage?tenant=${tenant}&${MONTH}`);
}

/** Polls until the tenant's month total has `count` decisions, then answers the whole body. */
async function settled(tenant: string, count: number): Promise<UsageBody> {
  const res = await eventually(
    () => usage(tenant),
    (r) => r.status === 200 && r.body.total.count >= count,
    { ...PROJECTOR_POLL, what: `${count} decisions of ${tenant}` },
  );
  return res.body;
}

/** Every key of the namespace with its value (strings and hashes are all this suite's keys hold). */
async function namespaceState(): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of (await redis.client.keys(keys.all())).sort()) {
    const type = await redis.client.type(key);
    out[key] =
      type === 'hash'
        ? await redis.client.hgetall(key)
        : type === 'string'
          ? await redis.client.get(key)
          : type;
  }
  return out;
}

describe('projector steps (real Kafka, real Redis): nothing partial, nothing lost, exactly the culprits dead-lettered', () => {
  it('a script error fails every step with nothing written; once repaired, everything applies once', async () => {
    // given: the shard's meta hash replaced by a string (no event can be blamed)
    const created = await redis.client.hget(keys.meta(), 'created');
    await redis.client.del(keys.meta());
    await redis.client.set(keys.meta(), 'hand-broken');
    const before = await namespaceState();
    const failuresBefore = await sut.metric('tally_projector_step_failures_total');
    const decisions = [decision('calm-a', 3), decision('calm-b', 5), decision('calm-a', 2)];
    // when
    await run.produce(decisions.flatMap(eventsOf));
    // then: the step fails again and again (each time from the stored offsets), writing nothing
    await eventually(
      () => sut.metric('tally_projector_step_failures_total'),
      (n) => n >= failuresBefore + 2,
      { ...PROJECTOR_POLL, what: 'two failed steps' },
    );
    expect(await namespaceState()).toEqual(before);
    // when repaired
    await redis.client.del(keys.meta());
    await redis.client.hset(keys.meta(), 'created', created ?? '0');
    // then: every event is applied, once
    expect((await settled('calm-a', 2)).total).toEqual({ cost: 5, count: 2 });
    expect((await settled('calm-b', 1)).total).toEqual({ cost: 5, count: 1 });
    expect(await redis.client.hget(keys.meta(), 'events')).toBe(String(decisions.length));
    expect(await sut.metric('tally_projector_events_dead_lettered_total')).toBe(0);
  });

  it('dead-letters exactly the events a step cannot take, with their reasons, and applies the rest exactly', async () => {
    // given: a corrupt stored value, a key of the wrong type, and a month total 10 below the bound
    await redis.client.hset(keys.usage('bad', 'month', T0), 'cost:_all', 'abc');
    await redis.client.set(keys.usage('wt', 'day', T0), 'hand-broken');
    await redis.client.hset(
      keys.usage('edge', 'month', T0),
      'cost:_all',
      String(MAX - 10),
      'count:_all',
      '3',
    );
    const unmatched: Decision['policies'] = [];
    const d = {
      calm1: decision('calm', 7),
      edge4: decision('edge', 4),
      bad1: decision('bad', 1),
      edge7: decision('edge', 7),
      whale1: decision('whale', MAX, unmatched),
      wt: decision('wt', 2),
      edge5: decision('edge', 5),
      whale2: decision('whale', MAX, unmatched),
      calm2: decision('calm', 11),
      edge1: decision('edge', 1),
      bad2: decision('bad', 2),
    };
    const culprits = {
      [d.bad1.id!]: /^corrupt: .*usage:bad:month:20261001T0000Z field "cost:_all" holds "abc"/,
    };
    culprits[d.bad2.id!] = culprits[d.bad1.id!]!;
    culprits[d.edge7.id!] =
      /^overflow: the usage of policy _all \(tenant "edge"\) in the month bucket .* \(cost stored 9007199254740981, earlier in the step 4, this event 7\)$/;
    culprits[d.whale2.id!] =
      /^overflow: the usage of policy _all \(tenant "whale"\) .* would exceed 9007199254740991/;
    culprits[d.wt.id!] = /^wrongtype: .*usage:wt:day:20261005T0000Z is not a hash$/;
    const events = Object.values(d).flatMap(eventsOf);
    const deadBefore = await sut.metric('tally_projector_events_dead_lettered_total');
    const appliedBefore = await sut.metric('tally_projector_events_applied_total');

    // when: all in one produce call, one partition: the same batches and steps
    await run.produce(events);

    // then: the bystander is exact
    expect((await settled('calm', 2)).total).toEqual({ cost: 18, count: 2 });
    // and the dead-letter topic holds exactly the five culprits' usage events, each once, with reasons
    const letters: ReadRecord[] = await run.readAll(run.topics.deadLetter, 5);
    const byId = new Map(letters.map((l) => [(JSON.parse(l.value) as { id: string }).id, l]));
    expect(letters).toHaveLength(5);
    expect([...byId.keys()].sort()).toEqual(Object.keys(culprits).sort());
    for (const [id, reason] of Object.entries(culprits)) {
      const letter = byId.get(id);
      expect(JSON.parse(letter?.value ?? '{}')).toMatchObject({ id, type: 'tally.usage.v1' });
      expect(letter?.headers).toMatchObject({
        'tally-dlq-reason': expect.stringMatching(reason) as unknown,
        'tally-dlq-source': 'projector',
        'tally-dlq-topic': run.topics.usage,
        'tally-dlq-partition': '0',
        'tally-dlq-offset': expect.stringMatching(/^\d+$/) as unknown,
      });
    }
    // and every other event is applied once: nothing lost, nothing counted twice
    await eventually(
      () => sut.metric('tally_projector_events_applied_total'),
      (n) => n >= appliedBefore + events.length - 5,
      { ...PROJECTOR_POLL, what: 'every other event applied' },
    );
    expect(await sut.metric('tally_projector_events_applied_total')).toBe(appliedBefore + events.length - 5);
    expect(await sut.metric('tally_projector_events_dead_lettered_total')).toBe(deadBefore + 5);
    // and the tenants next to the bound are exact at it, readable, never projection.corrupt
    expect((await usage('edge')).body.total).toEqual({ cost: MAX, count: 6 });
    expect((await usage('whale')).body.total).toEqual({ cost: MAX, count: 1 });
    // and what was broken by hand stays as it was: only the culprits' cells were left untouched
    expect(await redis.client.hgetall(keys.usage('bad', 'month', T0))).toEqual({ 'cost:_all': 'abc' });
    expect(await redis.client.get(keys.usage('wt', 'day', T0))).toBe('hand-broken');
    expect(await redis.client.exists(keys.usage('bad', 'hour', T0), keys.usage('wt', 'hour', T0))).toBe(0);
    expect((await usage('bad')).status).toBe(500);
  });
});
