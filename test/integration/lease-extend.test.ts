/**
 * Extending concurrency leases against a REAL Redis (database 12, as leases.test.ts): extend.lua
 * through LeaseService, with decide.lua and release.lua racing it. Time is the script's `now` where a
 * test is about the expiry edge; the Redis clock in the races.
 */
import {
  DecisionService,
  LeaseService,
  leaseKey,
  parseLeaseId,
  shardKeys,
  shardOf,
  type Decision,
} from '@tally/engine';
import type { Policy, WindowSpec } from '@tally/policy';
import { testPolicy, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStack } from './support/engine-stack';

const DB = 12;
const SHARDS = 64;
const T0 = Date.UTC(2026, 11, 2, 9, 0, 0);

const inflight = (limit: number, leaseTtlMs: number, name = 'inflight'): WindowSpec => ({
  name,
  role: 'burst',
  algorithm: 'concurrency',
  limit,
  periodMs: leaseTtlMs,
});
const policy = (name: string, windows: WindowSpec[]): Policy =>
  testPolicy(name, { key: ['tenant'], windows, maxCost: 1 });

describe(`${LeaseService.name}.extend`, () => {
  let stack: EngineStack;
  let redis: Redis;
  let fixedNow: number | undefined;
  let decisions: DecisionService;
  let sut: LeaseService;

  const use = (...policies: Policy[]): void => {
    stack.use(...policies);
  };
  const decide = (tenant: string): Promise<Decision> => decisions.decide({ selectors: { tenant }, cost: 1 });
  const zsetOf = (tenant: string, policyName: string, window = 'inflight'): string =>
    `tally:v1:{s${shardOf(tenant, SHARDS)}}:w:${policyName}:${window}:${tenant}:${tenant}`;
  const recordOf = (leaseId: string): string => {
    const parsed = parseLeaseId(leaseId);
    if (parsed === null) throw new Error(`not a lease id: ${leaseId}`);
    return leaseKey(shardKeys(parsed.shard), parsed.decisionId);
  };
  /** Leases live at `now` (what decide.lua counts; `#` scores below 0, so it is not among them). */
  const liveLeases = async (key: string, now: number): Promise<number> =>
    (await redis.zrangebyscore(key, `(${now}`, '+inf')).length;
  const redisNow = async (): Promise<number> => {
    const [s, us] = await redis.time();
    return Number(s) * 1000 + Math.floor(Number(us) / 1000);
  };

  beforeAll(async () => {
    stack = await EngineStack.start({
      db: DB,
      shards: SHARDS,
      tokenSecret: 'lease-extend-test-secret-0123456789',
      engine: { scriptNow: () => fixedNow },
      sutRedis: { protocol: 2 },
    });
    redis = stack.redis;
    decisions = new DecisionService(stack.engine, stack.source, stack.options);
    sut = new LeaseService(stack.engine, stack.source);
  });

  afterAll(() => stack.close());

  it('keeps the units held past the first expiry until the new one, then gives them back once', async () => {
    // given a lease of 10 s taken at T0 in a window of 1
    const name = uniqueName('extend');
    use(policy(name, [inflight(1, 10_000)]));
    const tenant = uniqueName('t');
    fixedNow = T0;
    const a = await decide(tenant);
    const id = a.lease?.id ?? '';

    // when it is extended at T0 + 8 s for the full lease TTL
    fixedNow = T0 + 8_000;
    const extended = await sut.extend(id, undefined, null);

    // then it holds until T0 + 18 s: denied at the old expiry and one ms before the new one
    expect(extended).toEqual({
      ok: true,
      leaseId: id,
      expiresAtMs: T0 + 18_000,
      ttlMs: 10_000,
      maxTtlMs: 10_000,
    });
    expect(await redis.zscore(zsetOf(tenant, name), `${id}|1`)).toBe(String(T0 + 18_000));
    expect((await redis.get(recordOf(id)))?.split('\n')[0]).toBe(String(T0 + 18_000));
    fixedNow = T0 + 10_000;
    expect((await decide(tenant)).kind).toBe('denied');
    fixedNow = T0 + 17_999;
    expect(await decide(tenant)).toMatchObject({ kind: 'denied', retry_after_ms: 1 });
    fixedNow = T0 + 18_000;
    expect((await decide(tenant)).allowed).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');
    // a late release is told `expired` with the extended expiry; nothing comes back twice
    expect(await sut.release(id, null)).toMatchObject({
      ok: true,
      outcome: 'expired',
      expiresAtMs: T0 + 18_000,
    });
    expect((await decide(tenant)).kind).toBe('denied');
  });

  it('grants the TTL asked for from now, never shortens, and refuses one above the lease TTL unchanged', async () => {
    const name = uniqueName('ttl');
    use(policy(name, [inflight(2, 10_000)]));
    const tenant = uniqueName('t');
    fixedNow = T0;
    const id = (await decide(tenant)).lease?.id ?? '';

    fixedNow = T0 + 1_000;
    expect(await sut.extend(id, 3_000, null)).toMatchObject({
      ok: true,
      expiresAtMs: T0 + 10_000,
      ttlMs: 9_000,
    });
    expect(await sut.extend(id, 10_001, null)).toMatchObject({
      ok: false,
      status: 400,
      code: 'lease.ttl_too_long',
      message: expect.stringContaining('10000') as unknown,
    });
    fixedNow = T0 + 9_000;
    expect(await sut.extend(id, 4_000, null)).toMatchObject({
      ok: true,
      expiresAtMs: T0 + 13_000,
      ttlMs: 4_000,
    });
    expect(await redis.zscore(zsetOf(tenant, name), `${id}|1`)).toBe(String(T0 + 13_000));
  });

  it('keeps the record one lease TTL past the new expiry and the window set until it', async () => {
    fixedNow = undefined;
    const name = uniqueName('keep');
    use(policy(name, [inflight(2, 2_000)]));
    const tenant = uniqueName('t');
    const id = (await decide(tenant)).lease?.id ?? '';

    // several extensions, each for the full TTL: the record and the set outlive every one of them
    for (let i = 0; i < 3; i++) expect(await sut.extend(id, undefined, null)).toMatchObject({ ok: true });

    expect(await redis.pttl(recordOf(id))).toBeGreaterThan(2_000);
    expect(await redis.pttl(zsetOf(tenant, name))).toBeGreaterThan(1_000);
  });

  it('refuses a lease at its expiry millisecond, and never gives its slot back once taken by another', async () => {
    const name = uniqueName('edge');
    use(policy(name, [inflight(1, 10_000)]));
    const tenant = uniqueName('t');
    fixedNow = T0;
    const a = (await decide(tenant)).lease?.id ?? '';
    fixedNow = T0;
    const b = uniqueName('t');
    const bLease = (await decide(b)).lease?.id ?? '';

    // one ms before its expiry a lease is live and extends; at its expiry it is gone
    fixedNow = T0 + 9_999;
    expect(await sut.extend(bLease, 1, null)).toMatchObject({ ok: true, expiresAtMs: T0 + 10_000 });
    fixedNow = T0 + 10_000;
    expect(await sut.extend(a, undefined, null)).toMatchObject({
      ok: false,
      status: 409,
      code: 'lease.expired',
    });
    expect(await sut.extend(bLease, undefined, null)).toMatchObject({ ok: false, code: 'lease.expired' });
    // expired and not yet reclaimed: the refusal left it expired, so the slot is free for exactly one
    const next = await decide(tenant);
    expect(next.allowed).toBe(true);
    expect((await decide(tenant)).kind).toBe('denied');
    // and reclaimed now (another holds the slot): still refused, still one in flight
    expect(await sut.extend(a, undefined, null)).toMatchObject({ ok: false, code: 'lease.expired' });
    expect(await redis.zscore(zsetOf(tenant, name), `${a}|1`)).toBeNull();
    expect(await liveLeases(zsetOf(tenant, name), T0 + 10_000)).toBe(1); // the new lease
    expect((await decide(tenant)).kind).toBe('denied');
  });

  it('refuses a released lease (409) and changes nothing', async () => {
    fixedNow = undefined;
    const name = uniqueName('released');
    use(policy(name, [inflight(1, 30_000)]));
    const tenant = uniqueName('t');
    const id = (await decide(tenant)).lease?.id ?? '';
    await sut.release(id, null);
    const taken = await decide(tenant);

    expect(await sut.extend(id, undefined, null)).toMatchObject({
      ok: false,
      status: 409,
      code: 'lease.released',
    });

    expect(taken.allowed).toBe(true);
    expect(await redis.zscore(zsetOf(tenant, name), `${id}|1`)).toBeNull();
    expect((await decide(tenant)).kind).toBe('denied');
  });

  it('bounds by the lease TTL in force: a reload that shortens it, and one that removes the window', async () => {
    fixedNow = T0;
    const name = uniqueName('reload');
    use(policy(name, [inflight(3, 60_000), inflight(3, 20_000, 'short')]));
    const tenant = uniqueName('t');
    const id = (await decide(tenant)).lease?.id ?? '';

    // the shortest of the lease's windows bounds it, as it bounded the lease
    expect(await sut.extend(id, 20_001, null)).toMatchObject({ ok: false, code: 'lease.ttl_too_long' });
    use(policy(name, [inflight(3, 5_000), inflight(3, 20_000, 'short')]));
    expect(await sut.extend(id, undefined, null)).toMatchObject({ ok: true, maxTtlMs: 5_000 });
    use(policy(uniqueName('other'), [inflight(3, 5_000)]));
    expect(await sut.extend(id, undefined, null)).toMatchObject({
      ok: false,
      status: 409,
      code: 'lease.not_extendable',
    });
  });

  it('refuses a tenant outside the token list, a malformed id and an unknown lease, changing nothing', async () => {
    fixedNow = T0;
    const name = uniqueName('scope');
    use(policy(name, [inflight(1, 10_000)]));
    const tenant = uniqueName('t');
    const id = (await decide(tenant)).lease?.id ?? '';
    fixedNow = T0 + 5_000;

    expect(await sut.extend(id, undefined, ['someone-else'])).toMatchObject({
      ok: false,
      status: 403,
      code: 'auth.forbidden',
    });
    expect(await sut.extend('nope', undefined, null)).toMatchObject({
      ok: false,
      status: 400,
      code: 'lease.invalid_id',
    });
    expect(await sut.extend('s3-01JD0000000000000000000000', undefined, null)).toMatchObject({
      ok: false,
      status: 404,
      code: 'lease.not_found',
    });
    expect(await redis.zscore(zsetOf(tenant, name), `${id}|1`)).toBe(String(T0 + 10_000));
    expect(await sut.extend(id, undefined, [tenant])).toMatchObject({ ok: true, expiresAtMs: T0 + 15_000 });
  });

  it('races release: the release always returns the units once, an extension after it is refused', async () => {
    // given 10 leases in a window of 10, each released and extended at once, with 40 acquisitions racing
    fixedNow = undefined;
    const name = uniqueName('race-release');
    use(policy(name, [inflight(10, 30_000)]));
    const tenant = uniqueName('t');
    const held = await Promise.all(Array.from({ length: 10 }, () => decide(tenant)));
    expect(held.every((d) => d.allowed)).toBe(true);
    const ids = held.map((d) => d.lease?.id ?? '');

    const [releases, extensions, acquisitions] = await Promise.all([
      Promise.all(ids.map((id) => sut.release(id, null))),
      Promise.all(ids.map((id) => sut.extend(id, undefined, null))),
      Promise.all(Array.from({ length: 40 }, () => decide(tenant))),
    ]);

    // then every release released, every extension either ran first or was refused as released
    expect(releases.every((r) => r.ok && r.outcome === 'released')).toBe(true);
    for (const e of extensions) expect(e.ok || e.code === 'lease.released').toBe(true);
    // no released lease holds anything: in flight = exactly the acquisitions that passed, ≤ 10
    const allowed = acquisitions.filter((d) => d.allowed).length;
    expect(allowed).toBeLessThanOrEqual(10);
    for (const id of ids) expect(await redis.zscore(zsetOf(tenant, name), `${id}|1`)).toBeNull();
    expect(await liveLeases(zsetOf(tenant, name), await redisNow())).toBe(allowed);
    expect(-Number(await redis.zscore(zsetOf(tenant, name), '#'))).toBe(allowed);
  });

  it('races expiry on the Redis clock: an expired lease is never revived, the window never exceeds its limit', async () => {
    fixedNow = undefined;
    const limit = 5;
    const ttl = 150;
    let extendedTotal = 0;
    let expiredTotal = 0;
    // offsets around the expiry edge: some extensions land before it, some after
    for (const offset of [-30, -10, 0, 5, 10, 20, 40]) {
      const name = uniqueName('race-expiry');
      use(policy(name, [inflight(limit, ttl)]));
      const tenant = uniqueName('t');
      const held = await Promise.all(Array.from({ length: limit }, () => decide(tenant)));
      const expiresAt = Date.parse(held[0].lease?.expires_at ?? '');
      // wait on Redis's clock (the script's), not on a fixed sleep of this process
      while ((await redisNow()) < expiresAt + offset) await new Promise((r) => setTimeout(r, 2));

      const [extensions, acquisitions] = await Promise.all([
        Promise.all(held.map((d) => sut.extend(d.lease?.id ?? '', undefined, null))),
        Promise.all(Array.from({ length: 3 * limit }, () => decide(tenant))),
      ]);

      const extended = extensions.filter((e) => e.ok).length;
      for (const e of extensions) expect(e.ok || e.code === 'lease.expired').toBe(true);
      // each lease either kept its unit (extended) or freed it (expired): acquisitions fit in the rest
      const allowed = acquisitions.filter((d) => d.allowed).length;
      expect(allowed).toBeLessThanOrEqual(limit - extended);
      // an extended lease holds until its new expiry; an expired one is not in the set as live
      const key = zsetOf(tenant, name);
      const scoreOf = async (id: string) => Number(await redis.zscore(key, `${id}|1`));
      for (const [i, e] of extensions.entries()) {
        if (e.ok) expect(await scoreOf(held[i].lease?.id ?? '')).toBe(e.expiresAtMs);
        else expect((await scoreOf(held[i].lease?.id ?? '')) || 0).toBeLessThanOrEqual(expiresAt);
      }
      extendedTotal += extended;
      expiredTotal += extensions.length - extended;
    }
    // the offsets did straddle the edge (else this test would prove nothing about the race)
    expect(extendedTotal).toBeGreaterThan(0);
    expect(expiredTotal).toBeGreaterThan(0);
  });
});
