/**
 * Concurrency windows and leases against a REAL Redis (database 12, so no relay drains the outbox
 * streams inspected here): decide.lua's lease section and release.lua, through DecisionService and
 * LeaseService. Time is the script's `now` where a test is about expiry; the Redis clock elsewhere.
 */
import {
  DecisionService,
  LeaseService,
  leaseKey,
  parseLeaseId,
  shardKeys,
  shardOf,
  unpackWindowState,
  type Decision,
} from '@tally/engine';
import type { Policy, WindowSpec } from '@tally/policy';
import { testPolicy, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStack } from './support/engine-stack';

const DB = 12;
const SHARDS = 64;
const SECRET = 'leases-test-secret-0123456789';
const T0 = Date.UTC(2026, 11, 1, 9, 0, 0);

const inflight = (limit: number, leaseTtlMs = 30_000, name = 'inflight'): WindowSpec => ({
  name,
  role: 'burst',
  algorithm: 'concurrency',
  limit,
  periodMs: leaseTtlMs,
});
const rate = (limit: number): WindowSpec => ({
  name: 'rate',
  role: 'sustained',
  algorithm: 'fixed_window',
  limit,
  periodMs: 3_600_000,
});
const policy = (name: string, windows: WindowSpec[], over: Partial<Policy> = {}): Policy =>
  testPolicy(name, { key: ['tenant'], windows, maxCost: 1, ...over });

describe('concurrency windows and leases', () => {
  let stack: EngineStack;
  let redis: Redis;
  let fixedNow: number | undefined;
  let decisions: DecisionService;
  let leases: LeaseService;

  const use = (...policies: Policy[]): void => {
    stack.use(...policies);
  };
  const decide = (tenant: string, extra: Record<string, unknown> = {}): Promise<Decision> =>
    decisions.decide({ selectors: { tenant }, cost: 1, ...extra });
  const zsetOf = (tenant: string, policyName: string, window = 'inflight'): string =>
    `tally:v1:{s${shardOf(tenant, SHARDS)}}:w:${policyName}:${window}:${tenant}:${tenant}`;
  /** Units in flight as stored (`#` holds minus them), expired leases not yet reclaimed included. */
  const storedInflight = async (key: string): Promise<number> =>
    0 - Number((await redis.zscore(key, '#')) ?? 0) || 0;

  beforeAll(async () => {
    stack = await EngineStack.start({
      db: DB,
      shards: SHARDS,
      tokenSecret: SECRET,
      engine: { scriptNow: () => fixedNow },
      sutRedis: { protocol: 2 },
    });
    redis = stack.redis;
    decisions = new DecisionService(stack.engine, stack.source, stack.options);
    leases = new LeaseService(stack.engine, stack.source);
  });

  afterAll(() => stack.close());

  it('allows exactly 10 of 500 parallel acquisitions at a limit of 10, each with its own lease', async () => {
    fixedNow = undefined;
    const name = uniqueName('race');
    use(policy(name, [inflight(10)]));
    const tenant = uniqueName('t');

    const all = await Promise.all(Array.from({ length: 500 }, () => decide(tenant)));

    const allowed = all.filter((d) => d.allowed);
    expect(allowed).toHaveLength(10);
    expect(all.filter((d) => d.kind === 'denied' && d.code === 'quota.exceeded')).toHaveLength(490);
    expect(all.filter((d) => !d.allowed).every((d) => d.lease === undefined)).toBe(true);
    const ids = new Set(allowed.map((d) => d.lease?.id));
    expect(ids.size).toBe(10);
    for (const d of allowed) {
      expect(d.lease?.id).toBe(`s${shardOf(tenant, SHARDS)}-${d.decision_id}`);
      expect(d.lease?.ttl_ms).toBe(30_000);
      expect(d.policies[0].windows[0]).toMatchObject({ limit: 10 });
    }
    expect(await redis.zcard(zsetOf(tenant, name))).toBe(11); // 10 leases + the `#` total
    expect(await storedInflight(zsetOf(tenant, name))).toBe(10);
  });

  it('returns capacity on release exactly once; a second release is a no-op that says so', async () => {
    fixedNow = undefined;
    const name = uniqueName('release');
    use(policy(name, [inflight(3)]));
    const tenant = uniqueName('t');
    const held = await Promise.all([decide(tenant), decide(tenant), decide(tenant)]);
    expect(held.every((d) => d.allowed)).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');

    const first = await leases.release(held[0].lease?.id ?? '', null);
    const second = await leases.release(held[0].lease?.id ?? '', null);

    expect(first).toMatchObject({ ok: true, outcome: 'released' });
    expect(second).toMatchObject({ ok: true, outcome: 'already_released' });
    expect(second.ok && first.ok && second.releasedAtMs).toBe(first.ok && first.releasedAtMs);
    // one unit came back, once: one acquisition passes, the next is denied
    const again = await decide(tenant);
    expect(again.allowed).toBe(true);
    expect(again.policies[0].windows[0].remaining).toBe(0);
    expect((await decide(tenant)).kind).toBe('denied');
    expect(await storedInflight(zsetOf(tenant, name))).toBe(3);
  });

  it('returns the units of an unreleased lease at its expiry, exactly once, and a late release changes nothing', async () => {
    const name = uniqueName('expiry');
    use(policy(name, [inflight(2, 10_000)]));
    const tenant = uniqueName('t');
    fixedNow = T0;
    const a = await decide(tenant);
    fixedNow = T0 + 4_000;
    const b = await decide(tenant);
    expect([a.allowed, b.allowed]).toEqual([true, true]);
    expect(a.lease?.expires_at).toBe(new Date(T0 + 10_000).toISOString());

    fixedNow = T0 + 9_999; // a's last millisecond: still held
    const before = await decide(tenant);
    expect(before).toMatchObject({ kind: 'denied', retry_after_ms: 1 });
    fixedNow = T0 + 10_000; // a has expired: exactly its unit is back
    const c = await decide(tenant);
    expect(c.allowed).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');
    // the commit reclaimed a; a late release finds it expired and gives nothing back
    expect(await leases.release(a.lease?.id ?? '', null)).toMatchObject({ ok: true, outcome: 'expired' });
    expect((await decide(tenant)).kind).toBe('denied');
    expect(await storedInflight(zsetOf(tenant, name))).toBe(2);
    // b expires at T0 + 14 s: its unit comes back once, reclaimed by the next commit
    fixedNow = T0 + 14_000;
    expect((await decide(tenant)).allowed).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');
    expect(await storedInflight(zsetOf(tenant, name))).toBe(2);
  });

  it('counts an expired lease released before any reclaim exactly once too', async () => {
    const name = uniqueName('expiry-release');
    use(policy(name, [inflight(1, 5_000)]));
    const tenant = uniqueName('t');
    fixedNow = T0;
    const a = await decide(tenant);
    fixedNow = T0 + 6_000;

    expect(await leases.release(a.lease?.id ?? '', null)).toMatchObject({ ok: true, outcome: 'expired' });

    expect(await storedInflight(zsetOf(tenant, name))).toBe(0);
    expect((await decide(tenant)).allowed).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');
    expect(await storedInflight(zsetOf(tenant, name))).toBe(1);
  });

  it('takes nothing when the rate window refuses, and nothing when the concurrency window refuses', async () => {
    fixedNow = undefined;
    const name = uniqueName('both');
    use(policy(name, [inflight(2), rate(3)]));
    const tenant = uniqueName('t');
    // the rate window is the field `rate` of its policy key's state hash (`<bucket>:<count>`)
    const rateKey = `tally:v1:{s${shardOf(tenant, SHARDS)}}:pk:${name}:${tenant}:${tenant}`;
    // concurrency refuses (2 in flight): the rate window keeps its count
    const [a, b] = [await decide(tenant), await decide(tenant)];
    expect([a.allowed, b.allowed]).toEqual([true, true]);
    const refusedByConcurrency = await decide(tenant);
    expect(refusedByConcurrency).toMatchObject({ kind: 'denied', reason: 'burst_quota_exhausted' });
    expect(unpackWindowState('fixed_window', await redis.hget(rateKey, 'rate')).c).toBe('2');
    // rate refuses (3 of 3 after one more): the concurrency window takes nothing
    await leases.release(a.lease?.id ?? '', null);
    const c = await decide(tenant);
    expect(c.allowed).toBe(true);
    await leases.release(b.lease?.id ?? '', null);
    const refusedByRate = await decide(tenant);
    expect(refusedByRate).toMatchObject({ kind: 'denied', reason: 'sustained_quota_exhausted' });
    expect(refusedByRate.lease).toBeUndefined();
    expect(await storedInflight(zsetOf(tenant, name))).toBe(1);
    expect(await redis.zcard(zsetOf(tenant, name))).toBe(2); // c and `#`
  });

  it('takes nothing in a concurrency window of one policy when another policy refuses', async () => {
    fixedNow = undefined;
    const limiter = uniqueName('limiter');
    const quota = uniqueName('quota');
    use(policy(limiter, [inflight(5)]), policy(quota, [rate(1)]));
    const tenant = uniqueName('t');
    expect((await decide(tenant)).allowed).toBe(true);

    const refused = await decide(tenant);

    expect(refused).toMatchObject({ kind: 'denied', reason: 'sustained_quota_exhausted' });
    expect(await storedInflight(zsetOf(tenant, limiter))).toBe(1);
  });

  it('answers an idempotent retry with the same lease and takes nothing more', async () => {
    fixedNow = undefined;
    const name = uniqueName('idem');
    use(policy(name, [inflight(2)]));
    const tenant = uniqueName('t');
    const first = await decide(tenant, { idempotency_key: 'job-1' });

    const retry = await decide(tenant, { idempotency_key: 'job-1' });

    expect(retry).toMatchObject({ allowed: true, replayed: true, decision_id: first.decision_id });
    expect(retry.lease?.id).toBe(first.lease?.id);
    expect(retry.lease?.expires_at).toBe(first.lease?.expires_at);
    expect(await storedInflight(zsetOf(tenant, name))).toBe(1);
  });

  it('keeps a live lease across a policy reload: it counts against the new limit until released or expired', async () => {
    fixedNow = T0;
    const name = uniqueName('reload');
    use(policy(name, [inflight(3, 10_000)]));
    const tenant = uniqueName('t');
    const held = [await decide(tenant), await decide(tenant), await decide(tenant)];
    expect(held.every((d) => d.allowed)).toBe(true);

    // the limit drops to 2 and the lease TTL grows to 60 s: the 3 old leases still count and keep their expiry
    use(policy(name, [inflight(2, 60_000)]));
    const overLimit = await decide(tenant);
    expect(overLimit.kind).toBe('denied');
    expect(overLimit.policies[0].windows[0]).toMatchObject({ limit: 2, remaining: 0 });
    await leases.release(held[0].lease?.id ?? '', null);
    expect((await decide(tenant)).kind).toBe('denied'); // 2 in flight, limit 2
    await leases.release(held[1].lease?.id ?? '', null);
    const fresh = await decide(tenant);
    expect(fresh.allowed).toBe(true);
    expect(fresh.lease?.ttl_ms).toBe(60_000);
    // the old lease ends at its own expiry (T0 + 10 s), under the new policy too
    fixedNow = T0 + 10_000;
    expect((await decide(tenant)).allowed).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');
  });

  it('keeps a window set alive until its longest lease ends, also after a reload shortened the TTL', async () => {
    fixedNow = T0;
    const name = uniqueName('ttl');
    use(policy(name, [inflight(5, 60_000)]));
    const tenant = uniqueName('t');
    expect((await decide(tenant)).allowed).toBe(true);
    use(policy(name, [inflight(5, 1_000)]));

    const short = await decide(tenant);

    expect(short.lease?.ttl_ms).toBe(1_000);
    expect(await redis.pttl(zsetOf(tenant, name))).toBeGreaterThan(50_000);
  });

  it('appends a release event to the shard outbox once, and keeps the lease record a TTL past expiry', async () => {
    fixedNow = undefined;
    const name = uniqueName('event');
    use(policy(name, [inflight(2, 30_000)]));
    const tenant = uniqueName('t');
    const d = await decide(tenant);
    const { shard, decisionId } = parseLeaseId(d.lease?.id ?? '') ?? { shard: -1, decisionId: '' };
    const record = leaseKey(shardKeys(shard), decisionId);
    expect(await redis.pttl(record)).toBeGreaterThan(30_000);

    await leases.release(d.lease?.id ?? '', null);
    await leases.release(d.lease?.id ?? '', null);

    const entries = await redis.xrange(shardKeys(shard).outbox, '-', '+');
    const releases = entries
      .map(([, f]) => Object.fromEntries(f.flatMap((_, i) => (i % 2 === 0 ? [[f[i], f[i + 1]]] : []))))
      .filter((f: Record<string, string>) => f.l !== undefined && f.l.includes(d.decision_id));
    expect(releases).toHaveLength(1);
    expect(JSON.parse(releases[0].l)).toEqual({
      v: 1,
      lease_id: d.lease?.id,
      id: d.decision_id,
      policy_set_version: stack.source.current.version,
      tenant,
      selectors: { tenant },
      units: 1,
      windows: [{ policy: name, window: 'inflight', key: tenant, limit: 2 }],
    });
  });

  it('refuses a release for a tenant outside the token list, a malformed id and an unknown lease', async () => {
    fixedNow = undefined;
    const name = uniqueName('scope');
    use(policy(name, [inflight(1)]));
    const tenant = uniqueName('t');
    const d = await decide(tenant);
    const id = d.lease?.id ?? '';

    expect(await leases.release(id, ['someone-else'])).toMatchObject({ ok: false, code: 'auth.forbidden' });
    expect((await decide(tenant)).kind).toBe('denied'); // still held
    expect(await leases.release('nope', null)).toMatchObject({ ok: false, code: 'lease.invalid_id' });
    expect(await leases.release('s3-01JD0000000000000000000000', null)).toMatchObject({
      ok: false,
      code: 'lease.not_found',
    });
    expect(await leases.release(id, [tenant])).toMatchObject({ ok: true, outcome: 'released' });
  });

  it('takes no lease on a peek, and shows live leases in the state view', async () => {
    fixedNow = undefined;
    const name = uniqueName('peek');
    use(policy(name, [inflight(4)]));
    const tenant = uniqueName('t');
    await decide(tenant, { cost: 1 });

    const peek = await decide(tenant, { cost: 0 });
    const state = await decisions.state(name, { tenant });

    expect(peek.allowed).toBe(true);
    expect(peek.lease).toBeUndefined();
    expect(peek.policies[0].windows[0].remaining).toBe(3);
    expect(state.ok && state.state.windows[0]).toMatchObject({
      algorithm: 'concurrency',
      remaining: 3,
      counters: { leases: 1, units: 1 },
    });
  });
});
