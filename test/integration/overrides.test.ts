/**
 * Runtime overrides against a REAL Redis (no mocks): the admin use cases write the shard's override
 * hash, and decide.lua reads it in the step that decides. Real: Redis (database 12, so no relay of
 * other suites drains the outbox streams inspected here). Each test has its own policy and tenants.
 */
import {
  DecisionService,
  OverridesService,
  OverridesStore,
  encodeScope,
  overrideIndexKey,
  overridesKey,
  shardKeys,
  shardOf,
  windowKey,
  type Decision,
  type Override,
} from '@tally/engine';
import type { Policy, WindowSpec } from '@tally/policy';
import { testPolicy, uniqueName } from '@tally/testing';
import { Redis } from 'ioredis';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EngineStack } from './support/engine-stack';

const DB = 12;
const SHARDS = 16;
const T0 = Date.UTC(2026, 10, 30, 9, 0, 0);
const win = (
  name: string,
  limit: number,
  algorithm: WindowSpec['algorithm'] = 'fixed_window',
): WindowSpec => ({
  name,
  role: 'sustained',
  algorithm,
  limit,
  periodMs: 3_600_000,
});

describe(OverridesService.name, () => {
  let stack: EngineStack;
  let redis: Redis;
  let fixedNow: number | undefined;
  let wallNow = T0;
  let decisions: DecisionService;
  let sut: OverridesService;

  const use = (...policies: Policy[]): void => {
    stack.use(...policies);
  };
  const tenantPolicy = (name: string, windows: WindowSpec[]) =>
    testPolicy(name, { key: ['tenant'], windows, maxCost: 10 });
  const decide = (tenant: string, cost = 1) => decisions.decide({ selectors: { tenant }, cost });
  const put = async (policy: string, key: string, limits: Record<string, number>, expiresAt?: string) => {
    const written = await sut.put(
      { policy, key },
      { limits, reason: 'test', ...(expiresAt && { expires_at: expiresAt }) },
      'ops-token',
    );
    if (!written.ok) throw new Error(JSON.stringify(written));
    return written.value;
  };

  beforeAll(async () => {
    stack = await EngineStack.start({
      db: DB,
      shards: SHARDS,
      tokenSecret: 'overrides-test-secret-0123456789',
      engine: { backendTimeoutMs: 2_000, scriptNow: () => fixedNow, clock: () => wallNow },
      alsoDelete: (k) => [overridesKey(k), overrideIndexKey(k)],
    });
    redis = stack.redis;
    decisions = new DecisionService(stack.engine, stack.source, stack.options);
    sut = new OverridesService(
      new OverridesStore(stack.sutRedis, stack.options),
      stack.source,
      stack.options,
    );
  });

  afterAll(() => stack.close());

  it('raises a limit on the next decision, says which override decided, and puts it in the outbox', async () => {
    // given a policy of 2 per hour per tenant, and an override of 5 for one tenant
    fixedNow = undefined;
    const name = uniqueName('raise');
    use(tenantPolicy(name, [win('hourly', 2)]));
    const tenant = uniqueName('acme');
    const written = await put(name, tenant, { hourly: 5 });
    expect(written.before).toBeNull();
    expect(written.after).toMatchObject({
      policy: name,
      key: tenant,
      tenant,
      limits: { hourly: 5 },
      setBy: 'ops-token',
    });

    // when it spends 6 units one by one
    const answers: Decision[] = [];
    for (let i = 0; i < 6; i++) answers.push(await decide(tenant));

    // then 5 pass, each naming the override, and the sixth is a quota denial at limit 5
    expect(answers.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    expect(answers[0].policies[0]).toEqual({
      name,
      mode: 'enforce',
      override: { version: written.version },
      windows: [expect.objectContaining({ name: 'hourly', limit: 5, remaining: 4 })],
    });
    expect(answers[5]).toMatchObject({ reason: 'sustained_quota_exhausted', code: 'quota.exceeded' });
    // another tenant keeps the policy's limit, and no override is named
    const other = await decide(uniqueName('other'));
    expect(other.policies[0]).not.toHaveProperty('override');
    expect(other.policies[0].windows[0].limit).toBe(2);
    // the outbox result carries the limit and version the relay puts in the events' data
    const shard = shardKeys(shardOf(tenant, SHARDS));
    const entries = await redis.xrange(shard.outbox, '-', '+');
    const mine = entries.filter(([, f]) => f[1].includes(answers[0].decision_id));
    expect(JSON.parse(mine[0][1][5])).toEqual([
      { remaining: 4, reset_ms: expect.any(Number), would_deny: false, override: written.version, limit: 5 },
    ]);
  });

  it('0 blocks the key with its own reason and code, consuming nothing; removing it lifts the block', async () => {
    fixedNow = undefined;
    const name = uniqueName('block');
    use(tenantPolicy(name, [win('hourly', 100), win('daily', 1000)]));
    const tenant = uniqueName('abuser');
    const written = await put(name, tenant, { hourly: 0 });

    const denied = await decide(tenant);

    expect(denied).toMatchObject({
      allowed: false,
      kind: 'denied',
      reason: 'blocked',
      code: 'quota.blocked',
    });
    expect(denied.retry_after_ms).toBe(86_400_000);
    expect(denied.policies[0].override).toEqual({ version: written.version });
    expect(denied.policies[0].windows.map((w) => w.limit)).toEqual([0, 0]);
    const shard = shardKeys(shardOf(tenant, SHARDS));
    expect(await redis.exists(windowKey(shard, encodeScope(tenant), name, 'hourly', tenant))).toBe(0);
    const denialFields = await redis.hkeys(shard.denials);
    expect(denialFields.some((f) => f.endsWith(`|${name}|${tenant}|blocked`))).toBe(true);

    const removed = await sut.remove({ policy: name, key: tenant }, 'ops');
    expect(removed).toMatchObject({ ok: true, value: { before: { limits: { hourly: 0 } }, after: null } });
    expect(await decide(tenant)).toMatchObject({
      allowed: true,
      policies: [{ windows: [{ limit: 100 }, { limit: 1000 }] }],
    });
    expect(await sut.remove({ policy: name, key: tenant }, 'ops')).toEqual({ ok: false, kind: 'not_found' });
  });

  it('a block that expires gives its retry-after; past the expiry the policy limit applies and the override is cleaned up', async () => {
    const name = uniqueName('expiry');
    use(tenantPolicy(name, [win('hourly', 3)]));
    const tenant = uniqueName('launch');
    // the write script judges an expired `before` by the Redis clock: expiries an hour from now
    const t0 = Date.now();
    wallNow = t0;
    const until = new Date(t0 + 3_600_000).toISOString();
    await put(name, tenant, { hourly: 0 }, until);

    fixedNow = t0 + 10_000;
    expect(await decide(tenant)).toMatchObject({ reason: 'blocked', retry_after_ms: 3_590_000 });
    const raise = await put(name, tenant, { hourly: 10 }, until);
    expect(raise.before).toMatchObject({ limits: { hourly: 0 } });
    expect((await decide(tenant)).policies[0].windows[0].limit).toBe(10);

    // when the raise has expired (the script's clock is past expires_at)
    fixedNow = t0 + 3_600_000;
    const after = await decide(tenant);

    // then the policy's limit is back, no override is named, and the script removed it
    expect(after.policies[0]).not.toHaveProperty('override');
    expect(after.policies[0].windows[0].limit).toBe(3);
    const shard = shardKeys(shardOf(tenant, SHARDS));
    expect(await redis.hexists(overridesKey(shard), `${name}:${encodeScope(tenant)}:${tenant}`)).toBe(0);
    fixedNow = undefined;
  });

  it('concurrent changes and decisions: no decision ever sees a mixed limit', async () => {
    // given two windows whose override limits always differ by exactly 1000 within one version
    fixedNow = undefined;
    const name = uniqueName('atomic');
    use(tenantPolicy(name, [win('a', 1_000_000), win('b', 1_000_000)]));
    const tenant = uniqueName('busy');
    // when 40 changes race 400 decisions
    const changes = Array.from({ length: 40 }, (_, k) => put(name, tenant, { a: 10_000 + k, b: 11_000 + k }));
    const answers = await Promise.all(Array.from({ length: 400 }, () => decide(tenant)));
    await Promise.all(changes);
    // then every decision saw one whole override (b − a = 1000) or none (both the policy's)
    const pairs = answers.map((d) => d.policies[0].windows.map((w) => w.limit));
    for (const [a, b] of pairs) expect(a === 1_000_000 ? b === 1_000_000 : b - a === 1000).toBe(true);
    expect(pairs.some(([a]) => a !== 1_000_000)).toBe(true);
    // and the version an answer names is that of the limits it shows
    const seen = new Map<number, number>();
    for (const d of answers) {
      const p = d.policies[0];
      if (p.override === undefined) continue;
      const a = p.windows[0].limit;
      expect(seen.get(p.override.version) ?? a).toBe(a);
      seen.set(p.override.version, a);
    }
  });

  it('lists by pages in a stable order, by policy and by tenant, and skips expired overrides', async () => {
    fixedNow = undefined;
    wallNow = Date.now();
    const p1 = uniqueName('lista');
    const p2 = uniqueName('listb');
    const p3 = testPolicy(uniqueName('listc'), { key: ['principal'], windows: [win('w', 10)], maxCost: 10 });
    use(tenantPolicy(p1, [win('w', 10)]), tenantPolicy(p2, [win('w', 10)]), p3);
    const tenants = Array.from({ length: 7 }, () => uniqueName('lt'));
    for (const t of tenants) await put(p1, t, { w: 20 });
    await put(p2, tenants[0], { w: 30 });
    const viaTenant = await sut.put(
      { policy: p3.name, key: 'svc-1', tenant: tenants[0] },
      { limits: { w: 1 }, reason: 'r' },
      'x',
    );
    expect(viaTenant).toMatchObject({ ok: true, value: { after: { tenant: tenants[0], key: 'svc-1' } } });
    // an override that expires at once is not listed (and is cleaned up)
    const gone = uniqueName('gone');
    await put(p1, gone, { w: 1 }, new Date(Date.now() + 1000).toISOString());

    const collect = async (query: { policy?: string; tenant?: string }, limit: number) => {
      const items: Override[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const result = await sut.list({ ...query, limit: String(limit), ...(cursor && { cursor }) });
        if (!result.ok) throw new Error(JSON.stringify(result));
        items.push(...result.value.items);
        if (result.value.nextCursor === null) return items;
        cursor = result.value.nextCursor;
      }
      throw new Error('no end');
    };
    await expect.poll(async () => (await collect({ policy: p1 }, 100)).length, { timeout: 5000 }).toBe(7);
    const paged = await collect({ policy: p1 }, 2);
    expect(paged.map((o) => o.tenant).sort()).toEqual([...tenants].sort());
    expect(
      await redis.zscore(
        overrideIndexKey(shardKeys(shardOf(gone, SHARDS))),
        `${p1}:${encodeScope(gone)}:${gone}`,
      ),
    ).toBeNull();

    const ofTenant = await collect({ tenant: tenants[0] }, 1);
    expect(ofTenant.map((o) => o.policy).sort()).toEqual([p1, p2, p3.name].sort());
    expect(await collect({ policy: p2, tenant: tenants[1] }, 10)).toEqual([]);
    expect(await sut.list({ policy: p1, cursor: 'not-a-cursor' })).toMatchObject({
      ok: false,
      errors: [{ path: 'cursor' }],
    });
  });

  it("the listing's clean-up (a removal without a head) leaves a live override and the ledger alone", async () => {
    // given an override in force (set after a listing read its field, as a race would have it)
    fixedNow = undefined;
    wallNow = Date.now();
    const name = uniqueName('live');
    use(tenantPolicy(name, [win('w', 10)]));
    const tenant = uniqueName('lv');
    await put(name, tenant, { w: 20 });
    const shard = shardKeys(shardOf(tenant, SHARDS));
    const field = `${name}:${encodeScope(tenant)}:${tenant}`;
    const entries = await redis.xlen(shard.outbox);

    // when the clean-up's call of override-write.lua runs on it
    const script = readFileSync(
      join(__dirname, '../../libs/engine/src/overrides/lua/override-write.lua'),
      'utf8',
    );
    const reply = (await redis.eval(
      script,
      3,
      overridesKey(shard),
      overrideIndexKey(shard),
      shard.outbox,
      'del',
      field,
      '',
      '',
      '',
    )) as [number, number, string, string];

    // then nothing is removed and nothing goes to the outbox
    expect(reply[0]).toBe(0);
    expect(await sut.get({ policy: name, key: tenant })).toMatchObject({
      ok: true,
      value: { limits: { w: 20 } },
    });
    expect(await redis.zscore(overrideIndexKey(shard), field)).toBe('0');
    expect(await redis.xlen(shard.outbox)).toBe(entries);
  });

  it('refuses an unknown policy or window, a key that does not fit, and a bad expiry, naming each field', async () => {
    const name = uniqueName('bad');
    use(testPolicy(name, { key: ['tenant', 'principal'], windows: [win('w', 10)], maxCost: 10 }));
    expect(await sut.put({ policy: 'nope', key: 'a' }, { limits: { w: 1 }, reason: 'r' }, 'x')).toMatchObject(
      {
        ok: false,
        errors: [{ path: 'policy' }],
      },
    );
    const bad = await sut.put(
      { policy: name, key: 'acme' },
      { limits: { w: -1, nope: 3 }, expires_at: '2020-01-01T00:00:00Z', reason: ' ' },
      'x',
    );
    expect(bad.ok || bad.kind !== 'invalid' ? [] : bad.errors.map((e) => e.path)).toEqual([
      'key',
      'limits.w',
      'limits.nope',
      'expires_at',
      'reason',
    ]);
    expect(await sut.get({ policy: name, key: 'acme:p1' })).toEqual({ ok: false, kind: 'not_found' });
  });
});
