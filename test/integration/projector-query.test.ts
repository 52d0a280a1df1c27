/**
 * The query API of the projector over a REAL Redis of its own, filled through the real sink
 * (`ProjectionStore.applyBatch`, i.e. apply-batch.lua): pagination, the range total, validation,
 * authentication, the audit trail with its retention, and the atomic step's own guarantees.
 */
import { createProjectionRedis, ProjectionStore, type ProjectionRedis } from '@tally/projections';
import { PrivateRedis, testEnv } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventsOf, InProcessProjector, RunTopics, type Decision } from './projector.harness';

const H = 3_600_000;
const T0 = Date.parse('2026-10-05T08:00:00Z');
const RANGE = 'granularity=hour&from=2026-10-05T08:00:00Z&to=2026-10-05T12:00:00Z';

let redis: PrivateRedis;
let run: RunTopics;
let client: ProjectionRedis;
let store: ProjectionStore;
let sut: InProcessProjector;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  run = new RunTopics(testEnv().kafkaBrokers, 'it-projector-query');
  client = createProjectionRedis({ mode: 'single', url: redis.url }, 'projector-query-test');
  store = new ProjectionStore(client, { auditRetentionMs: 30 * 24 * H, dedupTtlMs: H });
  sut = await InProcessProjector.start(redis.url, testEnv().kafkaBrokers, run.overrides);
});

afterAll(async () => {
  await sut?.stop();
  client?.disconnect();
  await run?.close();
  await redis?.stop();
});

async function apply(decisions: readonly Decision[], offset = '1'): Promise<void> {
  await store.applyBatch('live', decisions.flatMap(eventsOf), [
    { topic: 't', partition: 0, nextOffset: offset },
  ]);
}

describe('GET /v1/usage', () => {
  beforeAll(async () => {
    // given one decision per hour 08..11 (cost 1, 2, 3, 4), the 10:00 one matched by two policies
    await store.ensureActiveNamespace('live');
    await apply(
      [0, 1, 2, 3].map((i) => ({
        tenant: 'q',
        cost: i + 1,
        timeMs: T0 + i * H + 5_000,
        ...(i === 2
          ? {
              policies: [
                { name: 'p1', mode: 'enforce' as const, key: 'k', windows: [] },
                { name: 'p2', mode: 'enforce' as const, key: 'k', windows: [] },
              ],
            }
          : {}),
      })),
    );
  });

  it('pages by bucket and reports the total of the whole range on every page, each decision once', async () => {
    const first = await sut.get<Record<string, unknown>>(`/v1/usage?tenant=q&${RANGE}&limit=3`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      tenant: 'q',
      granularity: 'hour',
      buckets: [
        { start: '2026-10-05T08:00:00Z', policy: 'p1', cost: 1, count: 1 },
        { start: '2026-10-05T09:00:00Z', policy: 'p1', cost: 2, count: 1 },
        { start: '2026-10-05T10:00:00Z', policy: 'p1', cost: 3, count: 1 },
        { start: '2026-10-05T10:00:00Z', policy: 'p2', cost: 3, count: 1 },
      ],
      total: { cost: 10, count: 4 },
      next_cursor: expect.any(String) as unknown,
    });
    const cursor = first.body.next_cursor as string;
    const second = await sut.get(`/v1/usage?tenant=q&${RANGE}&limit=3&cursor=${cursor}`);
    expect(second.body).toEqual({
      tenant: 'q',
      granularity: 'hour',
      buckets: [{ start: '2026-10-05T11:00:00Z', policy: 'p1', cost: 4, count: 1 }],
      total: { cost: 10, count: 4 },
      next_cursor: null,
    });
  });

  it('narrows to one policy, and sums a range at another granularity from the same buckets', async () => {
    const p2 = await sut.get(`/v1/usage?tenant=q&policy=p2&${RANGE}`);
    expect(p2.body).toMatchObject({ total: { cost: 3, count: 1 }, buckets: [{ policy: 'p2', cost: 3 }] });
    const day = await sut.get(
      `/v1/usage?tenant=q&granularity=day&from=2026-10-05T00:00:00Z&to=2026-10-06T00:00:00Z`,
    );
    expect(day.body).toMatchObject({
      buckets: [
        { start: '2026-10-05T00:00:00Z', policy: 'p1', cost: 10, count: 4 },
        { start: '2026-10-05T00:00:00Z', policy: 'p2', cost: 3, count: 1 },
      ],
      total: { cost: 10, count: 4 },
    });
  });

  it('refuses unknown and invalid parameters with every field error, and a cursor of another query', async () => {
    const bad = await sut.get(`/v1/usage?tenant=q&granularity=week&bogus=1`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'request.invalid' });
    const paths = (bad.body.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(['bogus', 'granularity']);

    const order = await sut.get(`/v1/usage?tenant=q&from=2026-10-05T10:00:00Z&to=2026-10-05T09:00:00Z`);
    expect(order).toMatchObject({ status: 400, body: { errors: [{ path: 'from' }] } });
    const missing = await sut.get(`/v1/usage?granularity=hour`);
    expect(missing.status).toBe(400);
    expect(new Set((missing.body.errors as { path: string }[]).map((e) => e.path))).toEqual(
      new Set(['tenant']),
    );

    const first = await sut.get(`/v1/usage?tenant=q&${RANGE}&limit=1`);
    const foreign = await sut.get(
      `/v1/usage?tenant=other&${RANGE}&limit=1&cursor=${String(first.body.next_cursor)}`,
    );
    expect(foreign).toMatchObject({ status: 400, body: { errors: [{ path: 'cursor' }] } });
  });

  it('needs a caller token, and says when a namespace does not exist', async () => {
    expect((await sut.get(`/v1/usage?tenant=q`, null)).status).toBe(401);
    expect((await sut.get(`/v1/usage?tenant=q`, 'not-a-token-at-all')).status).toBe(401);
    expect((await sut.get(`/v1/audit`, null)).status).toBe(401);
    expect(await sut.get(`/v1/usage?tenant=q&namespace=nope`)).toMatchObject({
      status: 404,
      body: { code: 'namespace.not_found' },
    });
  });
});

describe('GET /v1/audit', () => {
  it('lists denials with reasons and counts, degraded decisions and reloads, in pages, within retention', async () => {
    const now = Date.now();
    // given two denials, a degraded decision, and a denial older than the 30-day retention
    await apply(
      [
        {
          tenant: 'qa',
          cost: 1,
          timeMs: now - 40 * 24 * H,
          outcome: 'denied',
          reason: 'burst_quota_exhausted',
        },
        { tenant: 'qa', cost: 1, timeMs: now - 3000, outcome: 'denied', reason: 'burst_quota_exhausted' },
        { tenant: 'qa', cost: 1, timeMs: now - 2000, outcome: 'denied', reason: 'sustained_quota_exhausted' },
      ],
      '2',
    );
    await apply(
      [{ tenant: 'qa', cost: 0, timeMs: now - 1000, outcome: 'degraded', policySetVersion: 'v-new' }],
      '3',
    );
    // and a version first seen 40 days ago, whose reload row retention has already trimmed
    await apply([{ tenant: 'qa', cost: 1, timeMs: now - 40 * 24 * H, policySetVersion: 'v-old' }], '4');
    await apply([{ tenant: 'qa', cost: 1, timeMs: now - 500, policySetVersion: 'v-old' }], '5');

    const since = new Date(now - 60 * 24 * H).toISOString();
    const first = await sut.get(`/v1/audit?tenant=qa&since=${since}&limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.entries).toEqual([
      {
        time: new Date(now - 3000).toISOString().replace('.000Z', 'Z'),
        type: 'denied',
        policy: 'p1',
        reason: 'burst_quota_exhausted',
        count: 1,
        selectors: { tenant: 'qa', principal: 'svc' },
      },
      expect.objectContaining({ type: 'denied', reason: 'sustained_quota_exhausted' }) as unknown,
    ]);
    const second = await sut.get(
      `/v1/audit?tenant=qa&since=${since}&limit=2&cursor=${String(first.body.next_cursor)}`,
    );
    expect(second.body).toEqual({
      entries: [expect.objectContaining({ type: 'degraded', policy: 'p1', count: 1 }) as unknown],
      next_cursor: null,
    });
    // and a new policy-set version appears once, in the tenant-less trail, at its first decision; a
    // version whose reload row retention trimmed is not reported again as a new reload
    const reloads = await sut.get(`/v1/audit?since=${since}`);
    const rows = reloads.body.entries as { type: string; reason: string; time: string }[];
    expect(rows.filter((e) => e.type === 'policy_reload').map((e) => [e.reason, e.time])).toEqual([
      ['v-new', new Date(now - 1000).toISOString().replace('.000Z', 'Z')],
    ]);
  });
});

describe('apply-batch.lua (through ProjectionStore)', () => {
  it('skips events applied by an earlier batch inside the atomic step, and never rewinds an offset', async () => {
    const decisions: Decision[] = [{ tenant: 'qd', cost: 7, timeMs: T0 }];
    const events = decisions.flatMap(eventsOf);
    const first = await store.applyBatch('live', events, [{ topic: 'x', partition: 1, nextOffset: '10' }]);
    // when a later batch (say, another member's, fetched before a rebalance) carries the same events
    const again = await store.applyBatch(
      'live',
      [...events, ...eventsOf({ tenant: 'qd', cost: 1, timeMs: T0 })],
      [{ topic: 'x', partition: 1, nextOffset: '5' }],
    );
    expect(first).toEqual({ applied: 2, duplicates: 0 });
    expect(again).toEqual({ applied: 2, duplicates: 2 });
    expect((await store.offsets('live')).get('x:1')).toBe('10');
    const res = await sut.get(`/v1/usage?tenant=qd&${RANGE}`);
    expect(res.body.total).toEqual({ cost: 8, count: 2 });
  });
});
