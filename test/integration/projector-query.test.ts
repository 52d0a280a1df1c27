/**
 * The query API of the projector over a REAL Redis of its own, filled through the real sink
 * (`ProjectionStore.applyBatch`, i.e. apply-batch.lua): pagination, the range total, validation,
 * authentication, per-key usage and top keys (the `keys:` hashes; a hash big enough for HSCAN is
 * written directly in the packed layout), the audit trail with its retention, and the atomic step's
 * own guarantees. Every answer is checked against the document the projector serves at /openapi.json.
 */
import { ProjectionKeys, ProjectionNamespaces, ProjectionStore } from '@tally/projections';
import { createRedisClient, type RedisClient } from '@tally/redis';
import { PrivateRedis, testEnv } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiContract } from '../e2e/support/openapi-contract';
import { eventsOf, InProcessProjector, RunTopics, type Decision, type HttpResult } from './projector.harness';

const H = 3_600_000;
const T0 = Date.parse('2026-10-05T08:00:00Z');
const RANGE = 'granularity=hour&from=2026-10-05T08:00:00Z&to=2026-10-05T12:00:00Z';
/** The shards of `live`: those the projector gives it over RunTopics' 3 partitions. */
const SHARDS = 3;
/** Shard 0 of `live`, where the tests that write a key by hand write it. */
const LIVE = new ProjectionKeys('live', 0);

let redis: PrivateRedis;
let run: RunTopics;
let client: RedisClient;
let store: ProjectionStore;
let sut: InProcessProjector;
let contract: OpenApiContract;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  run = new RunTopics(testEnv().kafkaBrokers, 'it-projector-query');
  client = createRedisClient({ mode: 'single', url: redis.url }, 'worker', 'projector-query-test');
  store = new ProjectionStore(client, { auditRetentionMs: 30 * 24 * H, dedupTtlMs: H });
  sut = await InProcessProjector.start(redis.url, testEnv().kafkaBrokers, run.overrides);
  contract = await OpenApiContract.fetch(sut.baseUrl);
});

/** A query through HTTP whose answer (status and body) must be one the served document allows. */
async function query<T = Record<string, unknown>>(
  path: string,
  token?: string | null,
): Promise<HttpResult<T>> {
  const res = await sut.get<T>(path, token);
  const template = contract.templateOf('get', path);
  expect(template, `${path} is documented`).toBeDefined();
  contract.expectConforms('get', template ?? path, res);
  return res;
}

afterAll(async () => {
  await sut?.stop();
  client?.disconnect();
  await run?.close();
  await redis?.stop();
});

/**
 * Decision `i` goes to shard `i mod SHARDS`, as if the decisions came from different partitions:
 * every query below reads its answer from several shards (a key's usage, a bucket's, an audit
 * page's rows split between them) and must sum and merge them exactly.
 */
async function apply(decisions: readonly Decision[], offset = '1'): Promise<void> {
  for (let shard = 0; shard < SHARDS; shard++) {
    const own = decisions.filter((_, i) => i % SHARDS === shard);
    await store.applyBatch(
      { namespace: 'live', shard },
      own.flatMap(eventsOf),
      shard === 0 ? [{ topic: 't', partition: 0, nextOffset: offset }] : [],
    );
  }
}

describe('GET /v1/usage', () => {
  beforeAll(async () => {
    // given one decision per hour 08..11 (cost 1, 2, 3, 4), the 10:00 one matched by two policies
    await new ProjectionNamespaces(store.redis).ensureActive('live', SHARDS);
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
    const first = await query<Record<string, unknown>>(`/v1/usage?tenant=q&${RANGE}&limit=3`);
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
    const second = await query(`/v1/usage?tenant=q&${RANGE}&limit=3&cursor=${cursor}`);
    expect(second.body).toEqual({
      tenant: 'q',
      granularity: 'hour',
      buckets: [{ start: '2026-10-05T11:00:00Z', policy: 'p1', cost: 4, count: 1 }],
      total: { cost: 10, count: 4 },
      next_cursor: null,
    });
  });

  it('narrows to one policy, and sums a range at another granularity from the same buckets', async () => {
    const p2 = await query(`/v1/usage?tenant=q&policy=p2&${RANGE}`);
    expect(p2.body).toMatchObject({ total: { cost: 3, count: 1 }, buckets: [{ policy: 'p2', cost: 3 }] });
    const day = await query(
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
    const bad = await query(`/v1/usage?tenant=q&granularity=week&bogus=1`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'request.invalid' });
    const paths = (bad.body.errors as { path: string }[]).map((e) => e.path).sort();
    expect(paths).toEqual(['bogus', 'granularity']);

    const order = await query(`/v1/usage?tenant=q&from=2026-10-05T10:00:00Z&to=2026-10-05T09:00:00Z`);
    expect(order).toMatchObject({ status: 400, body: { errors: [{ path: 'from' }] } });
    const missing = await query(`/v1/usage?granularity=hour`);
    expect(missing.status).toBe(400);
    expect(new Set((missing.body.errors as { path: string }[]).map((e) => e.path))).toEqual(
      new Set(['tenant']),
    );

    const first = await query(`/v1/usage?tenant=q&${RANGE}&limit=1`);
    const foreign = await query(
      `/v1/usage?tenant=other&${RANGE}&limit=1&cursor=${String(first.body.next_cursor)}`,
    );
    expect(foreign).toMatchObject({ status: 400, body: { errors: [{ path: 'cursor' }] } });
  });

  it('needs a caller token, and says when a namespace does not exist', async () => {
    expect((await query(`/v1/usage?tenant=q`, null)).status).toBe(401);
    expect((await query(`/v1/usage?tenant=q`, 'not-a-token-at-all')).status).toBe(401);
    expect((await query(`/v1/audit`, null)).status).toBe(401);
    const missing = await query(`/v1/usage?tenant=q&namespace=sk-live-secret-namespace`);
    expect(missing).toMatchObject({ status: 404, body: { code: 'namespace.not_found' } });
    // and the query string is not repeated back
    expect(JSON.stringify(missing.body)).not.toContain('sk-live-secret-namespace');
  });
});

/** Policies p1 and p2 of one decision, both keyed by `key`. */
function keyed(key: string, ...names: string[]): Decision['policies'] {
  return names.map((name) => ({ name, mode: 'enforce' as const, key, windows: [] }));
}

/** A key that needs percent-encoding in the URL and in nothing else (fields are stored raw). */
const ODD_KEY = 'team a/é:1';

/** Calls of a Redis command so far on the suite's private server (INFO commandstats). */
async function commandCalls(command: string): Promise<number> {
  const info = await redis.client.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

describe('GET /v1/usage?key=', () => {
  beforeAll(async () => {
    // given tenant qk: k1 at 08, 09, 10 (cost 1, 2, 3; at 10 under p1 AND p2), k2 at 09:30 and 11
    // (cost 5, 4), and a key with odd characters at 08:30 (cost 7); p1 unless said otherwise
    await new ProjectionNamespaces(store.redis).ensureActive('live', SHARDS);
    await apply(
      [
        { tenant: 'qk', cost: 1, timeMs: T0 + 5_000, policies: keyed('k1', 'p1') },
        { tenant: 'qk', cost: 7, timeMs: T0 + H / 2, policies: keyed(ODD_KEY, 'p1') },
        { tenant: 'qk', cost: 2, timeMs: T0 + H + 5_000, policies: keyed('k1', 'p1') },
        { tenant: 'qk', cost: 5, timeMs: T0 + 1.5 * H, policies: keyed('k2', 'p1') },
        { tenant: 'qk', cost: 3, timeMs: T0 + 2 * H + 5_000, policies: keyed('k1', 'p1', 'p2') },
        { tenant: 'qk', cost: 4, timeMs: T0 + 3 * H + 5_000, policies: keyed('k2', 'p1') },
      ],
      '6',
    );
  });

  it("lists one key's buckets (empty ones dropped) and the total of its whole range on every page", async () => {
    const first = await query<Record<string, unknown>>(
      `/v1/usage?tenant=qk&policy=p1&key=k1&${RANGE}&limit=2`,
    );
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      tenant: 'qk',
      granularity: 'hour',
      key: 'k1',
      buckets: [
        { start: '2026-10-05T08:00:00Z', policy: 'p1', cost: 1, count: 1 },
        { start: '2026-10-05T09:00:00Z', policy: 'p1', cost: 2, count: 1 },
      ],
      total: { cost: 6, count: 3 },
      next_cursor: expect.any(String) as unknown,
    });
    const second = await query(
      `/v1/usage?tenant=qk&policy=p1&key=k1&${RANGE}&limit=2&cursor=${String(first.body.next_cursor)}`,
    );
    // the 11:00 bucket has no usage of k1: no row, as for any empty bucket
    expect(second.body).toEqual({
      tenant: 'qk',
      granularity: 'hour',
      key: 'k1',
      buckets: [{ start: '2026-10-05T10:00:00Z', policy: 'p1', cost: 3, count: 1 }],
      total: { cost: 6, count: 3 },
      next_cursor: null,
    });
  });

  it('keeps keys and policies apart, reads a key needing URL encoding, and a key without usage is empty', async () => {
    const k2 = await query(`/v1/usage?tenant=qk&policy=p1&key=k2&${RANGE}`);
    expect(k2.body).toMatchObject({
      buckets: [
        { start: '2026-10-05T09:00:00Z', policy: 'p1', cost: 5, count: 1 },
        { start: '2026-10-05T11:00:00Z', policy: 'p1', cost: 4, count: 1 },
      ],
      total: { cost: 9, count: 2 },
    });
    const p2 = await query(`/v1/usage?tenant=qk&policy=p2&key=k1&${RANGE}`);
    expect(p2.body).toMatchObject({
      buckets: [{ start: '2026-10-05T10:00:00Z', policy: 'p2', cost: 3, count: 1 }],
      total: { cost: 3, count: 1 },
    });
    const odd = await query(`/v1/usage?tenant=qk&policy=p1&key=${encodeURIComponent(ODD_KEY)}&${RANGE}`);
    expect(odd.body).toMatchObject({
      key: ODD_KEY,
      buckets: [{ start: '2026-10-05T08:00:00Z', policy: 'p1', cost: 7, count: 1 }],
      total: { cost: 7, count: 1 },
    });
    const none = await query(`/v1/usage?tenant=qk&policy=p1&key=nobody&${RANGE}`);
    expect(none).toMatchObject({
      status: 200,
      body: { key: 'nobody', buckets: [], total: { cost: 0, count: 0 } },
    });
  });

  it('sums the total from coarser `keys:` buckets: a day, and a minute range covered by hours', async () => {
    const day = await query(
      `/v1/usage?tenant=qk&policy=p1&key=k1&granularity=day&from=2026-10-05T00:00:00Z&to=2026-10-06T00:00:00Z`,
    );
    expect(day.body).toMatchObject({
      buckets: [{ start: '2026-10-05T00:00:00Z', policy: 'p1', cost: 6, count: 3 }],
      total: { cost: 6, count: 3 },
    });
    // when a page of minutes holds none of k1's events, the total still covers the whole range
    const minutes = await query(
      `/v1/usage?tenant=qk&policy=p1&key=k1&granularity=minute&from=2026-10-05T07:00:00Z&to=2026-10-05T12:00:00Z&limit=5`,
    );
    expect(minutes.body).toMatchObject({ buckets: [], total: { cost: 6, count: 3 } });
  });

  it('refuses a key without policy, a malformed key, and a cursor of another key', async () => {
    const alone = await query(`/v1/usage?tenant=qk&key=k1&${RANGE}`);
    expect(alone).toEqual({
      status: 400,
      body: {
        code: 'request.invalid',
        message: 'the request is invalid',
        errors: [{ path: 'key', message: 'key needs policy: usage per key is kept per policy' }],
      },
    });
    for (const key of ['', 'a%0Ab', 'k'.repeat(2049)]) {
      const bad = await query(`/v1/usage?tenant=qk&policy=p1&key=${key}&${RANGE}`);
      expect(bad).toMatchObject({ status: 400, body: { code: 'request.invalid' } });
      expect(bad.body.errors).toEqual([
        { path: 'key', message: 'key must be 1 to 2048 characters without control characters' },
      ]);
    }
    const first = await query(`/v1/usage?tenant=qk&policy=p1&key=k1&${RANGE}&limit=1`);
    const cursor = String(first.body.next_cursor);
    for (const other of ['&key=k2', '']) {
      const foreign = await query(`/v1/usage?tenant=qk&policy=p1${other}&${RANGE}&limit=1&cursor=${cursor}`);
      expect(foreign).toMatchObject({
        status: 400,
        body: { errors: [{ path: 'cursor', message: 'cursor belongs to another query' }] },
      });
    }
  });

  it('answers 500 projection.corrupt, naming the bucket, when the stored value is not <cost>:<count>', async () => {
    // given a field written by hand (or an older layout) in one hour bucket of tenant qc
    await client.hset(LIVE.keyUsage('qc', 'p1', 'hour', T0 + H), 'broken', 'oops');
    const res = await query(`/v1/usage?tenant=qc&policy=p1&key=broken&${RANGE}`);
    expect(res).toEqual({
      status: 500,
      body: {
        code: 'projection.corrupt',
        message:
          'projection namespace live: the usage of key "broken" (tenant "qc", policy p1) in the hour ' +
          'bucket of 2026-10-05T09:00:00Z is not <cost>:<count>; replay the namespace',
      },
    });
    const top = await query(`/v1/top-keys?tenant=qc&policy=p1&granularity=hour&at=2026-10-05T09:30:00Z`);
    expect(top).toMatchObject({ status: 500, body: { code: 'projection.corrupt' } });
  });

  it('answers 500 projection.corrupt when a per-policy usage value is not a decimal integer', async () => {
    // given a `usage:` counter overwritten by hand in one hour bucket of tenant qu
    await client.hset(LIVE.usage('qu', 'hour', T0 + H), 'cost:p1', '12abc', 'count:p1', '3');
    const expected = {
      status: 500,
      body: {
        code: 'projection.corrupt',
        message:
          'projection namespace live: the usage of policy p1 (tenant "qu") in the hour bucket of ' +
          '2026-10-05T09:00:00Z is not a decimal integer of at most 9007199254740991; replay the namespace',
      },
    };
    // then: the policy's rows and every-policy rows fail alike; nothing is read as 0 or NaN
    expect(await query(`/v1/usage?tenant=qu&policy=p1&${RANGE}`)).toEqual(expected);
    expect(await query(`/v1/usage?tenant=qu&${RANGE}`)).toEqual(expected);
  });
});

describe('GET /v1/top-keys', () => {
  const BIG = { tenant: 'qbig', policy: 'p1', at: '2026-10-05T13:00:00Z' };
  const HEAVY = [
    { key: 'h-c', cost: 500, count: 9 },
    { key: 'h-a', cost: 500, count: 3 },
    { key: 'h-b', cost: 500, count: 3 },
    { key: 'h-d', cost: 400, count: 1 },
    { key: 'h-e', cost: 300, count: 1 },
    { key: 'h-f', cost: 300, count: 1 },
  ];

  /** Light key i: cost i % 100 (many ties), count i % 7 + 1; the heavy ones last. */
  const BIG_FIELDS: Record<string, string> = {};
  for (let i = 0; i < 5000; i++)
    BIG_FIELDS[`light-${String(i).padStart(4, '0')}`] = `${i % 100}:${(i % 7) + 1}`;
  for (const { key, cost, count } of HEAVY) BIG_FIELDS[key] = `${cost}:${count}`;

  beforeAll(async () => {
    // given (besides tenant qk above) a day of 5000 light keys and six heavy ones with ties, written
    // directly in the packed layout: far more fields than one HGETALL may read
    await client.hset(LIVE.keyUsage(BIG.tenant, BIG.policy, 'day', T0), BIG_FIELDS);
  });

  it('lists the heaviest keys of one bucket with distinct_keys, reading a small hash whole', async () => {
    const scans = await commandCalls('hscan');
    const day = await query(`/v1/top-keys?tenant=qk&policy=p1&at=2026-10-05T23:59:59Z`);
    expect(day).toEqual({
      status: 200,
      body: {
        tenant: 'qk',
        policy: 'p1',
        granularity: 'day',
        start: '2026-10-05T00:00:00Z',
        keys: [
          { key: 'k2', cost: 9, count: 2 },
          { key: ODD_KEY, cost: 7, count: 1 },
          { key: 'k1', cost: 6, count: 3 },
        ],
        distinct_keys: 3,
      },
    });
    expect(await commandCalls('hscan')).toBe(scans);
    // and limit cuts the list, never distinct_keys; `at` is read in its zone (11:15+02:00 is 09:15Z)
    const hour = await query(
      `/v1/top-keys?tenant=qk&policy=p1&granularity=hour&at=${encodeURIComponent('2026-10-05T11:15:00+02:00')}&limit=1`,
    );
    expect(hour.body).toEqual({
      tenant: 'qk',
      policy: 'p1',
      granularity: 'hour',
      start: '2026-10-05T09:00:00Z',
      keys: [{ key: 'k2', cost: 5, count: 1 }],
      distinct_keys: 2,
    });
  });

  it('reads a big hash by HSCAN and still ranks by cost, count, then key', async () => {
    const scans = await commandCalls('hscan');
    const res = await query(`/v1/top-keys?tenant=${BIG.tenant}&policy=p1&at=${BIG.at}&limit=5`);
    expect(res).toEqual({
      status: 200,
      body: {
        tenant: 'qbig',
        policy: 'p1',
        granularity: 'day',
        start: '2026-10-05T00:00:00Z',
        keys: HEAVY.slice(0, 5),
        distinct_keys: 5006,
      },
    });
    // then the hash was read in several HSCAN calls, not one HGETALL of 5006 fields
    expect((await commandCalls('hscan')) - scans).toBeGreaterThan(1);
  });

  it('lists 1000 distinct keys of the big hash, heaviest first', async () => {
    const res = await query<{ keys: { key: string; cost: number; count: number }[] }>(
      `/v1/top-keys?tenant=${BIG.tenant}&policy=p1&at=${BIG.at}&limit=1000`,
    );
    const { keys } = res.body;
    expect(keys).toHaveLength(1000);
    expect(new Set(keys.map((k) => k.key)).size).toBe(1000);
    // the same ranking as a full sort of everything written: cost desc, count desc, key asc
    const everything = Object.entries(BIG_FIELDS).map(([key, value]) => {
      const [cost, count] = value.split(':').map(Number) as [number, number];
      return { key, cost, count };
    });
    everything.sort((a, b) => b.cost - a.cost || b.count - a.count || (a.key < b.key ? -1 : 1));
    expect(keys).toEqual(everything.slice(0, 1000));
    expect(keys.slice(0, 7)).toEqual([...HEAVY, { key: 'light-0699', cost: 99, count: 7 }]);
  });

  it('answers an empty bucket with no keys, and defaults to the day of now', async () => {
    const empty = await query(`/v1/top-keys?tenant=qk&policy=p1&granularity=month&at=2020-01-15T00:00:00Z`);
    expect(empty.body).toEqual({
      tenant: 'qk',
      policy: 'p1',
      granularity: 'month',
      start: '2020-01-01T00:00:00Z',
      keys: [],
      distinct_keys: 0,
    });
    const today = (ms: number) =>
      new Date(Math.floor(ms / 86_400_000) * 86_400_000).toISOString().replace('.000Z', 'Z');
    const before = today(Date.now());
    const now = await query(`/v1/top-keys?tenant=qk&policy=p1`);
    expect(now.body).toMatchObject({ granularity: 'day', keys: [], distinct_keys: 0 });
    expect([before, today(Date.now())]).toContain(now.body.start);
  });

  it('refuses bad and unknown parameters with every field error, needs tenant, policy and a token', async () => {
    // shapes: refused by the DTO together
    const shape = await query(`/v1/top-keys?tenant=qk&policy=p1&granularity=week&limit=ten&bogus=1`);
    expect(shape).toMatchObject({ status: 400, body: { code: 'request.invalid' } });
    expect((shape.body.errors as { path: string }[]).map((e) => e.path).sort()).toEqual([
      'bogus',
      'granularity',
      'limit',
    ]);
    // values: refused by the lib's parser together
    const values = await query(`/v1/top-keys?tenant=qk&policy=p1&at=2026-10-05T09:00:00&limit=0`);
    expect(values).toEqual({
      status: 400,
      body: {
        code: 'request.invalid',
        message: 'the request is invalid',
        errors: [
          { path: 'at', message: 'at must be an ISO 8601 time with a zone' },
          { path: 'limit', message: 'limit must be an integer from 1 to 1000' },
        ],
      },
    });
    expect(await query(`/v1/top-keys?tenant=qk&policy=p1&limit=1001`)).toMatchObject({
      status: 400,
      body: { errors: [{ path: 'limit' }] },
    });
    const missing = await query(`/v1/top-keys?policy=Not_A_Policy`);
    expect(new Set((missing.body.errors as { path: string }[]).map((e) => e.path))).toEqual(
      new Set(['tenant', 'policy']),
    );
    const noPolicy = await query(`/v1/top-keys?tenant=qk`);
    expect(noPolicy.status).toBe(400);
    expect(noPolicy.body.errors).toContainEqual({ path: 'policy', message: 'policy is required' });
    expect((await query(`/v1/top-keys?tenant=qk&policy=p1`, null)).status).toBe(401);
    expect(await query(`/v1/top-keys?tenant=qk&policy=p1&namespace=nope`)).toMatchObject({
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
      [{ tenant: 'qa', cost: 1, timeMs: now - 1000, outcome: 'degraded', policySetVersion: 'v-new' }],
      '3',
    );
    // and a version first seen 40 days ago, whose reload row retention has already trimmed
    await apply([{ tenant: 'qa', cost: 1, timeMs: now - 40 * 24 * H, policySetVersion: 'v-old' }], '4');
    await apply([{ tenant: 'qa', cost: 1, timeMs: now - 500, policySetVersion: 'v-old' }], '5');

    const since = new Date(now - 60 * 24 * H).toISOString();
    const first = await query(`/v1/audit?tenant=qa&since=${since}&limit=2`);
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
    const second = await query(
      `/v1/audit?tenant=qa&since=${since}&limit=2&cursor=${String(first.body.next_cursor)}`,
    );
    expect(second.body).toEqual({
      entries: [expect.objectContaining({ type: 'degraded', policy: 'p1', count: 1 }) as unknown],
      next_cursor: null,
    });
    // and a new policy-set version appears once, in the tenant-less trail, at its first decision; a
    // version whose reload row retention trimmed is not reported again as a new reload
    const reloads = await query(`/v1/audit?since=${since}`);
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
    const shard = { namespace: 'live', shard: 1 }; // partition 1's
    const first = await store.applyBatch(shard, events, [{ topic: 'x', partition: 1, nextOffset: '10' }]);
    // when a later batch (say, another member's, fetched before a rebalance) carries the same events
    const again = await store.applyBatch(
      shard,
      [...events, ...eventsOf({ tenant: 'qd', cost: 1, timeMs: T0 })],
      [{ topic: 'x', partition: 1, nextOffset: '5' }],
    );
    expect(first).toEqual({ applied: 1, duplicates: 0, refused: 0 });
    expect(again).toEqual({ applied: 1, duplicates: 1, refused: 0 });
    expect((await new ProjectionNamespaces(store.redis).offsets('live')).get('x:1')).toBe('10');
    const res = await query(`/v1/usage?tenant=qd&${RANGE}`);
    expect(res.body.total).toEqual({ cost: 8, count: 2 });
  });
});
