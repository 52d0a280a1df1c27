/**
 * The projector against REAL Kafka (the shared broker, topics and group of this run only) and a REAL
 * redis-server of its own: events in, exact usage out, through redelivery, invalid records, restarts
 * with Kafka's offsets rewound, and a rebalance between two members.
 */
import { eventually, PrivateRedis, testEnv } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, InProcessProjector, PROJECTOR_POLL, RunTopics, type Decision } from './projector.harness';

interface UsageBody {
  tenant: string;
  granularity: string;
  buckets: { start: string; policy: string; cost: number; count: number }[];
  total: { cost: number; count: number };
  next_cursor: string | null;
}

const H = 3_600_000;
const T0 = Date.parse('2026-10-05T08:00:00Z');
const RANGE = 'granularity=hour&from=2026-10-05T08:00:00Z&to=2026-10-05T12:00:00Z';
const TWO_POLICIES = [
  { name: 'p1', mode: 'enforce' as const, key: 'svc', windows: [] },
  { name: 'p2', mode: 'shadow' as const, key: 'svc', windows: [] },
];

let redis: PrivateRedis;
let run: RunTopics;
const brokers = (): string[] => testEnv().kafkaBrokers;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  run = new RunTopics(brokers(), 'it-projector');
  await run.create();
});

afterAll(async () => {
  await run?.close();
  await redis?.stop();
});

/** Decisions of one tenant over hours 08..11, one of them charged to two policies. */
function workload(tenant: string, n: number): Decision[] {
  return Array.from({ length: n }, (_, i) => ({
    tenant,
    cost: (i % 5) + 1,
    timeMs: T0 + (i % 4) * H + i * 1000,
    ...(i % 10 === 0 ? { policies: TWO_POLICIES } : {}),
  }));
}

/** What the projection must say for these decisions: per hour and policy, and in total. */
function expected(decisions: readonly Decision[]): {
  buckets: UsageBody['buckets'];
  total: UsageBody['total'];
} {
  const cells = new Map<string, { cost: number; count: number }>();
  const total = { cost: 0, count: 0 };
  for (const d of decisions) {
    total.cost += d.cost;
    total.count += 1;
    const hour = new Date(Math.floor(d.timeMs / H) * H).toISOString().replace('.000Z', 'Z');
    for (const p of d.policies ?? [{ name: 'p1' }]) {
      const cell = cells.get(`${hour}|${p.name}`) ?? { cost: 0, count: 0 };
      cell.cost += d.cost;
      cell.count += 1;
      cells.set(`${hour}|${p.name}`, cell);
    }
  }
  const buckets = [...cells]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, t]) => {
      const [start = '', policy = ''] = id.split('|');
      return { start, policy, ...t };
    });
  return { buckets, total };
}

async function usageOf(projector: InProcessProjector, tenant: string): Promise<UsageBody> {
  const res = await projector.get<UsageBody>(`/v1/usage?tenant=${tenant}&${RANGE}`);
  expect(res.status).toBe(200);
  return res.body;
}

function settled(want: UsageBody['total']) {
  return (body: UsageBody) => body.total.count >= want.count;
}

describe('projector (real Kafka, real Redis)', () => {
  it('projects exact sums per bucket, counts a redelivered event once, and dead-letters what is invalid', async () => {
    const sut = await InProcessProjector.start(redis.url, brokers(), run.overrides);
    try {
      const decisions = workload('acme', 200);
      const events = decisions.flatMap(eventsOf);
      // given every event, then the same events again (the relay re-published them), and garbage between
      await run.produce(events);
      await run.ledger.producer.send(run.topics.usage, [
        { key: 'acme', value: '{"not":"an event"}' },
        { key: 'acme', value: 'garbage' },
      ]);
      await run.produce(events);
      const late = workload('acme-late', 5);
      await run.produce(late.flatMap(eventsOf));

      const want = expected(decisions);
      const body = await eventually(() => usageOf(sut, 'acme'), settled(want.total), PROJECTOR_POLL);
      await eventually(() => usageOf(sut, 'acme-late'), settled(expected(late).total), PROJECTOR_POLL);
      // then each decision counts once: per policy in the rows, once in the all-policies total
      expect(body).toEqual({ tenant: 'acme', granularity: 'hour', ...want, next_cursor: null });
      expect(await usageOf(sut, 'acme-late')).toMatchObject(expected(late));
      expect(await sut.metric('tally_projector_events_dead_lettered_total')).toBe(2);
      expect(await sut.metric('tally_projector_events_duplicate_total')).toBeGreaterThanOrEqual(
        events.length,
      );

      // and the invalid records are on the dead-letter topic with their reason and origin
      const dead = await eventually(
        () => run.ledger.admin.fetchTopicOffsets(run.topics.deadLetter),
        (offsets) => offsets.reduce((n, o) => n + Number(o.high), 0) >= 2,
        PROJECTOR_POLL,
      );
      expect(dead.reduce((n, o) => n + Number(o.high), 0)).toBe(2);
      const letters = await readAll(run, run.topics.deadLetter, 2);
      expect(letters.map((l) => [l.value, l.headers['tally-dlq-reason']]).sort()).toEqual([
        ['garbage', 'not JSON'],
        ['{"not":"an event"}', expect.stringContaining('type: unknown event type') as unknown],
      ]);
      expect(letters[0]?.headers).toMatchObject({
        'tally-dlq-topic': run.topics.usage,
        'tally-dlq-group': run.groupId,
        'tally-dlq-source': 'projector',
      });
      expect(letters.every((l) => /^\d+$/.test(l.headers['tally-dlq-offset'] ?? ''))).toBe(true);
    } finally {
      await sut.stop();
    }
  });

  it('resumes from the offsets stored in Redis, not Kafka, and never re-applies an event', async () => {
    // given the group stopped and its Kafka offsets rewound to the beginning
    for (const topic of [run.topics.usage, run.topics.decision]) {
      await run.ledger.admin.resetOffsets(run.groupId, topic, 'earliest');
    }
    const sut = await InProcessProjector.start(redis.url, brokers(), run.overrides);
    try {
      const more = workload('acme-restart', 30);
      await run.produce(more.flatMap(eventsOf));
      await eventually(() => usageOf(sut, 'acme-restart'), settled(expected(more).total), PROJECTOR_POLL);

      // then it read only the new records: nothing was met twice, and the old totals are unchanged
      expect(await sut.metric('tally_projector_events_duplicate_total')).toBe(0);
      expect(await sut.metric('tally_projector_events_applied_total')).toBe(more.flatMap(eventsOf).length);
      expect(await usageOf(sut, 'acme')).toMatchObject(expected(workload('acme', 200)));
      // and Kafka's commits caught up with Redis (lag visible to kafka-consumer-groups)
      const lag = await eventually(
        () => run.ledger.admin.groupLag(run.groupId, [run.topics.usage, run.topics.decision]),
        (parts) => parts.every((p) => p.lag === 0),
        PROJECTOR_POLL,
      );
      expect(lag.every((p) => p.committed !== null)).toBe(true);
      // and the lag gauge, measured every second against the offsets in Redis, drains to zero
      await eventually(
        () => sut.metric('tally_projector_lag_events'),
        (lagging) => lagging === 0,
        { ...PROJECTOR_POLL, timeoutMs: 5_000 },
      );
    } finally {
      await sut.stop();
    }
  });

  it('keeps totals exact while a second member joins and the first one leaves (rebalances)', async () => {
    const first = await InProcessProjector.start(redis.url, brokers(), run.overrides);
    let second: InProcessProjector | undefined;
    try {
      const waves = [workload('acme-rb', 150), workload('acme-rb', 150), workload('acme-rb', 150)];
      await run.produce(waves[0].flatMap(eventsOf));
      second = await InProcessProjector.start(redis.url, brokers(), run.overrides);
      await run.produce(waves[1].flatMap(eventsOf));
      await first.stop();
      await run.produce(waves[2].flatMap(eventsOf));

      const all = waves.flat();
      const body = await eventually(
        () => usageOf(second!, 'acme-rb'),
        settled(expected(all).total),
        PROJECTOR_POLL,
      );
      expect(body).toMatchObject(expected(all));
    } finally {
      await second?.stop();
    }
  });
});

async function readAll(
  topics: RunTopics,
  topic: string,
  count: number,
): Promise<{ value: string; headers: Record<string, string> }[]> {
  const consumer = topics.ledger.consumers.create({
    groupId: `${topics.groupId}-reader`,
    topics: [topic],
    fromBeginning: true,
    autoCommit: false,
  });
  const got: { value: string; headers: Record<string, string> }[] = [];
  await consumer.run(async (batch) => {
    for (const r of batch.records) got.push({ value: r.value?.toString() ?? '', headers: { ...r.headers } });
    await Promise.resolve();
  });
  try {
    await eventually(
      () => Promise.resolve(got.length),
      (n) => n >= count,
      PROJECTOR_POLL,
    );
    return got;
  } finally {
    await consumer.disconnect();
  }
}
