/**
 * The decision engine against a REAL Redis (no mocks): decide.lua, its keys, its writes, and the TS
 * mirror of the window maths. Real: Redis (the shared one, in database 13 so that no relay running
 * for other suites drains the outbox streams these tests inspect). Each test uses its own policy
 * names and tenants, so keys never collide across tests or runs.
 */
import { createHash } from 'node:crypto';
import { Test } from '@nestjs/testing';
import {
  DEFAULT_MAX_COST,
  DecisionService,
  EngineModule,
  EngineService,
  allShardKeys,
  decideLua,
  encodeScope,
  idempotencyKey,
  shardKeys,
  shardOf,
  type Decision,
  type DecisionRequest,
} from '@tally/engine';
import type { Algorithm, Policy, PolicySet, WindowSpec } from '@tally/policy';
import { testEnv, uniqueName, testPolicy } from '@tally/testing';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { EngineStack } from './support/engine-stack';

const DB = 13;
const SHARDS = 64;
const SECRET = 'engine-test-secret-0123456789';

function policy(name: string, windows: WindowSpec[], over: Partial<Policy> = {}): Policy {
  const maxCost = Math.min(...windows.map((w) => w.limit));
  return testPolicy(name, { windows, maxCost, ...over });
}
const win = (
  name: string,
  algorithm: Algorithm,
  limit: number,
  periodMs: number,
  role: WindowSpec['role'] = 'sustained',
): WindowSpec => ({
  name,
  role,
  algorithm,
  limit,
  periodMs,
});

describe(DecisionService.name, () => {
  let stack: EngineStack;
  let redis: Redis;
  let fixedNow: number | undefined;
  let sut: DecisionService;

  const use = (...policies: Policy[]): void => {
    stack.use(...policies);
  };

  beforeAll(async () => {
    stack = await EngineStack.start({
      db: DB,
      shards: SHARDS,
      tokenSecret: SECRET,
      engine: { backendTimeoutMs: 2_000, scriptNow: () => fixedNow },
      sutRedis: { protocol: 2, enableAutoPipelining: false },
    });
    redis = stack.redis;
    sut = new DecisionService(stack.engine, stack.source, stack.options);
  });

  afterAll(() => stack.close());

  async function outboxEntriesOf(decisionIds: Set<string>): Promise<Record<string, string>[]> {
    const found: Record<string, string>[] = [];
    for (const shard of allShardKeys(SHARDS)) {
      for (const [, flat] of await redis.xrange(shard.outbox, '-', '+')) {
        const fields: Record<string, string> = {};
        for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
        if (decisionIds.has((JSON.parse(fields.p) as { id: string }).id)) found.push(fields);
      }
    }
    return found;
  }

  it('loads decide.lua (EVALSHA after the first call) and answers', async () => {
    fixedNow = undefined;
    const name = uniqueName('load');
    use(policy(name, [win('w', 'fixed_window', 5, 60_000)]));
    const decision = await sut.decide({ selectors: { principal: 'p' }, cost: 1 });
    expect(decision).toMatchObject({
      allowed: true,
      kind: 'allowed',
      policies: [{ name, windows: [{ remaining: 4 }] }],
    });
    const sha = createHash('sha1').update(decideLua()).digest('hex');
    expect(await redis.call('SCRIPT', 'EXISTS', sha)).toEqual([1]);
  });

  it('allows exactly the limit out of 500 parallel decisions', async () => {
    fixedNow = undefined;
    const name = uniqueName('race');
    use(policy(name, [win('w', 'fixed_window', 100, 3_600_000)], { maxCost: 1 }));
    const tenant = uniqueName('t');
    const decisions = await Promise.all(
      Array.from({ length: 500 }, () => sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1 })),
    );
    expect(decisions.filter((d) => d.allowed)).toHaveLength(100);
    expect(decisions.filter((d) => d.kind === 'denied')).toHaveLength(400);
    const allowedIds = new Set(decisions.filter((d) => d.allowed).map((d) => d.decision_id));
    expect(await outboxEntriesOf(allowedIds)).toHaveLength(100);
  });

  it('sets a window expiry when its bucket begins, and it outlives the bucket while the bucket is in use', async () => {
    // given a fixed and a sliding window of one minute (the token bucket refreshes once per period),
    // which share their policy key's state hash: one key, one expiry
    const name = uniqueName('expiry');
    use(policy(name, [win('f', 'fixed_window', 100, 60_000), win('s', 'sliding_window', 100, 60_000)]));
    const tenant = uniqueName('t');
    const keyOf = (_window: string) => `tally:v1:{s${shardOf(tenant, SHARDS)}}:pk:${name}:${tenant}:p`;
    const bucket = Date.UTC(2026, 10, 30, 9, 0, 0);
    const decide = async (at: number) => {
      fixedNow = at;
      const d = await sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1 });
      expect(d.allowed).toBe(true);
      return d.policies[0].windows;
    };

    // when the first decision of a bucket writes: both expire two periods later, past their reset
    const first = await decide(bucket + 1_000);
    for (const [i, w] of ['f', 's'].entries()) {
      const pttl = await redis.pttl(keyOf(w));
      expect(pttl).toBeGreaterThan(119_000);
      expect(pttl).toBeGreaterThanOrEqual(first[i].reset_ms);
    }

    // when a later decision of the same bucket writes (the expiry shortened here to tell them apart)
    for (const w of ['f', 's']) await redis.pexpire(keyOf(w), 90_000);
    await decide(bucket + 30_000);
    // then the expiry set when the bucket began stands
    for (const w of ['f', 's']) expect(await redis.pttl(keyOf(w))).toBeLessThanOrEqual(90_000);

    // when the first decision of the next bucket writes, the expiry is set again
    const next = await decide(bucket + 61_000);
    for (const [i, w] of ['f', 's'].entries()) {
      const pttl = await redis.pttl(keyOf(w));
      expect(pttl).toBeGreaterThan(119_000);
      expect(pttl).toBeGreaterThanOrEqual(next[i].reset_ms);
    }
  });

  it("extends a token bucket's expiry once per period, and it always outlives the bucket's refill", async () => {
    // given a token bucket of one minute: its state matters for a period after each write
    const name = uniqueName('tb-expiry');
    use(policy(name, [win('t', 'token_bucket', 100, 60_000)]));
    const tenant = uniqueName('t');
    const key = `tally:v1:{s${shardOf(tenant, SHARDS)}}:pk:${name}:${tenant}:p`;
    const t0 = Date.UTC(2026, 10, 30, 9, 0, 0);
    const decide = async (at: number) => {
      fixedNow = at;
      const d = await sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1 });
      expect(d.allowed).toBe(true);
      return d.policies[0].windows[0];
    };

    // when the first write sets the expiry: two periods, past the refill
    const first = await decide(t0);
    expect(await redis.pttl(key)).toBeGreaterThan(119_000);
    expect(await redis.pttl(key)).toBeGreaterThanOrEqual(first.reset_ms);
    expect(await redis.hget(key, '_e')).toBe(String(t0 + 120_000));

    // when a write within the period needs no more than that (the expiry shortened to tell them apart)
    await redis.pexpire(key, 90_000);
    await decide(t0 + 30_000);
    // then no PEXPIRE: `_e` (t0 + 120 s) is past this write's period (t0 + 90 s)
    expect(await redis.pttl(key)).toBeLessThanOrEqual(90_000);

    // when a write needs the hash past `_e` (t0 + 70 s + a period > t0 + 120 s), the expiry moves again
    const later = await decide(t0 + 70_000);
    expect(await redis.pttl(key)).toBeGreaterThan(119_000);
    expect(await redis.pttl(key)).toBeGreaterThanOrEqual(later.reset_ms);
    expect(await redis.hget(key, '_e')).toBe(String(t0 + 70_000 + 120_000));
  });

  it('a burst denial consumes nothing from sustained, and a sustained denial nothing from burst', async () => {
    const name = uniqueName('bs');
    use(
      policy(
        name,
        [win('burst', 'token_bucket', 5, 1_000, 'burst'), win('sustained', 'fixed_window', 8, 3_600_000)],
        { maxCost: 5 },
      ),
    );
    const sel = { tenant: uniqueName('t'), principal: 'p' };
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0);
    for (let i = 0; i < 5; i++) expect((await sut.decide({ selectors: sel, cost: 1 })).allowed).toBe(true);
    // when burst is empty
    const burstDenied = await sut.decide({ selectors: sel, cost: 1 });
    // then the denial names burst and sustained still has 3 left (8 − 5)
    expect(burstDenied).toMatchObject({
      allowed: false,
      reason: 'burst_quota_exhausted',
      retry_after_ms: 200,
      binding: { window: 'burst' },
    });
    expect(burstDenied.policies[0].windows[1]).toMatchObject({ name: 'sustained', remaining: 3 });

    fixedNow += 1_000; // burst is full again
    expect((await sut.decide({ selectors: sel, cost: 3 })).allowed).toBe(true);
    // when sustained is exhausted
    const sustainedDenied = await sut.decide({ selectors: sel, cost: 1 });
    expect(sustainedDenied).toMatchObject({
      allowed: false,
      reason: 'sustained_quota_exhausted',
      binding: { window: 'sustained' },
    });
    // then burst kept its 2 tokens (5 − 3): the denial took nothing from it
    expect(sustainedDenied.policies[0].windows[0]).toMatchObject({ name: 'burst', remaining: 2 });
    const peek = await sut.decide({ selectors: sel, cost: 0 });
    expect(peek.policies[0].windows.map((w) => w.remaining)).toEqual([2, 0]);
  });

  it('binds the denial to the window with the longest wait', async () => {
    const name = uniqueName('bind');
    use(
      policy(name, [win('short', 'fixed_window', 2, 1_000, 'burst'), win('long', 'fixed_window', 2, 60_000)]),
    );
    const sel = { tenant: uniqueName('t'), principal: 'p' };
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0);
    await sut.decide({ selectors: sel, cost: 2 });
    const denied = await sut.decide({ selectors: sel, cost: 1 });
    expect(denied).toMatchObject({
      reason: 'sustained_quota_exhausted',
      retry_after_ms: 60_000,
      binding: { window: 'long' },
    });
  });

  it('replays an idempotent decision without consuming, writes one outbox entry, and 409s on a different request', async () => {
    fixedNow = undefined;
    const name = uniqueName('idem');
    use(policy(name, [win('w', 'fixed_window', 10, 3_600_000)]));
    const sel = { tenant: uniqueName('t'), principal: 'p' };
    const first = await sut.decide({ selectors: sel, cost: 3, idempotency_key: 'b-77' });
    const again = await sut.decide({
      selectors: { ...sel, principal: ' p ' },
      cost: 3,
      idempotency_key: 'b-77',
    });
    expect(first).toMatchObject({ allowed: true, replayed: false });
    expect(again).toMatchObject({
      allowed: true,
      replayed: true,
      decision_id: first.decision_id,
      policies: first.policies,
    });
    expect((await sut.decide({ selectors: sel, cost: 0 })).policies[0].windows[0].remaining).toBe(7);
    expect(await outboxEntriesOf(new Set([first.decision_id]))).toHaveLength(1);

    const conflict = await sut.decide({ selectors: sel, cost: 4, idempotency_key: 'b-77' });
    expect(conflict).toMatchObject({ allowed: false, kind: 'conflict', code: 'idempotency.conflict' });
    expect((await sut.decide({ selectors: sel, cost: 0 })).policies[0].windows[0].remaining).toBe(7);
  });

  it('names the idempotency record by the digest of the key, never the key itself', async () => {
    // given a key made of characters that mean something in key names and glob patterns
    fixedNow = undefined;
    const name = uniqueName('idemname');
    use(policy(name, [win('w', 'fixed_window', 10, 3_600_000)]));
    const tenant = uniqueName('t');
    const key = `${uniqueName('k')}:{s1}*?[x]`;

    // when an allowed decision stores its record
    await sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1, idempotency_key: key });

    // then the record lives under the base64url SHA-256 of the key, and no key name contains the key
    const shard = shardKeys(shardOf(tenant, SHARDS));
    const digest = createHash('sha256').update(key).digest('base64url');
    const expected = `${shard.base}:idem.sha256:${encodeScope(tenant)}:${digest}`;
    expect(idempotencyKey(shard, encodeScope(tenant), key)).toBe(expected);
    expect(await redis.exists(expected)).toBe(1);
    expect(await redis.pttl(expected)).toBeGreaterThan(0);
    const names = await redis.keys(`${shard.base}:idem*`);
    expect(names.filter((n) => n.includes(key.slice(0, 12)))).toEqual([]);
  });

  it('refuses an idempotency key outside the alphabet with 400, writing nothing', async () => {
    fixedNow = undefined;
    const name = uniqueName('idembad');
    use(policy(name, [win('w', 'fixed_window', 10, 3_600_000)]));
    const sel = { tenant: uniqueName('t'), principal: 'p' };

    // Two keys that a lone surrogate once made into one record: each refused on its own.
    for (const idempotency_key of ['k\ud800', 'k\ud801', 'k\u0000', 'a b']) {
      expect(await sut.decide({ selectors: sel, cost: 1, idempotency_key })).toMatchObject({
        allowed: false,
        kind: 'invalid',
        code: 'idempotency_key.invalid',
      });
    }
    expect((await sut.decide({ selectors: sel, cost: 0 })).policies[0].windows[0].remaining).toBe(10);
  });

  it('stores no idempotency record for a denial: a retry is evaluated afresh', async () => {
    const name = uniqueName('idemdeny');
    use(policy(name, [win('w', 'fixed_window', 2, 60_000)]));
    const sel = { tenant: uniqueName('t'), principal: 'p' };
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0);
    await sut.decide({ selectors: sel, cost: 2 });
    expect(await sut.decide({ selectors: sel, cost: 1, idempotency_key: 'k' })).toMatchObject({
      kind: 'denied',
    });
    fixedNow += 60_000;
    expect(await sut.decide({ selectors: sel, cost: 1, idempotency_key: 'k' })).toMatchObject({
      kind: 'allowed',
      replayed: false,
    });
  });

  it('lets a request fall through a disabled policy of a group to the next one', async () => {
    fixedNow = undefined;
    const [off, next, later] = [uniqueName('off'), uniqueName('next'), uniqueName('later')];
    const w = [win('w', 'fixed_window', 10, 60_000)];
    use(
      policy(off, w, { group: 'g', enabled: false }),
      policy(next, w, { group: 'g' }),
      policy(later, w, { group: 'g' }),
    );
    const decision = await sut.decide({ selectors: { tenant: uniqueName('t'), principal: 'p' }, cost: 1 });
    expect(decision.policies.map((p) => p.name)).toEqual([next]);
    expect(decision.policies[0].windows[0].remaining).toBe(9);
  });

  it('shadow: counts, never denies, reports would_deny, and commits only what it would have allowed', async () => {
    const [enforced, shadow] = [uniqueName('enf'), uniqueName('shadow')];
    use(
      policy(enforced, [win('w', 'fixed_window', 100, 60_000)]),
      policy(shadow, [win('a', 'fixed_window', 2, 60_000, 'burst'), win('b', 'fixed_window', 50, 60_000)], {
        mode: 'shadow',
      }),
    );
    const sel = { tenant: uniqueName('t'), principal: 'p' };
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0);
    const results: Decision[] = [];
    for (let i = 0; i < 3; i++) results.push(await sut.decide({ selectors: sel, cost: 1 }));
    expect(results.map((d) => d.allowed)).toEqual([true, true, true]);
    expect(results.map((d) => d.policies[1].would_deny)).toEqual([false, false, true]);
    // the third request would have been denied by `a`, so `b` (of the same shadow policy) kept 48
    expect(results[2].policies[1].windows.map((w) => [w.name, w.remaining])).toEqual([
      ['a', 0],
      ['b', 48],
    ]);
    expect(results[2].policies[0].windows[0].remaining).toBe(97);
    expect(results[2].binding).toMatchObject({ policy: enforced });
    const [entry] = await outboxEntriesOf(new Set([results[2].decision_id]));
    expect(JSON.parse(entry.r)).toEqual([
      { remaining: 97, reset_ms: 60_000, would_deny: false },
      { remaining: 0, reset_ms: 60_000, would_deny: true },
      { remaining: 48, reset_ms: 60_000, would_deny: false },
    ]);
  });

  it('cost 0 is a peek: it writes no key and no outbox entry', async () => {
    fixedNow = undefined;
    const name = uniqueName('peek');
    use(policy(name, [win('w', 'sliding_window', 10, 60_000), win('b', 'token_bucket', 5, 1_000, 'burst')]));
    const tenant = uniqueName('t');
    const decision = await sut.decide({
      selectors: { tenant, principal: 'p' },
      cost: 0,
      idempotency_key: 'peek',
    });
    expect(decision).toMatchObject({ allowed: true, kind: 'allowed' });
    expect(decision.policies[0].windows.map((w) => w.remaining)).toEqual([10, 5]);
    expect(await redis.keys(`tally:v1:*:${name}:*`)).toEqual([]);
    expect(await redis.keys(`tally:v1:*:idem:${tenant}:*`)).toEqual([]);
    expect(await outboxEntriesOf(new Set([decision.decision_id]))).toEqual([]);
  });

  it('writes the outbox entry exactly: p (the payload), t (decision time), r (window results)', async () => {
    const name = uniqueName('outbox');
    use(
      policy(name, [
        win('burst', 'token_bucket', 10, 1_000, 'burst'),
        win('sustained', 'fixed_window', 100, 60_000),
      ]),
    );
    const tenant = uniqueName('t');
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0) + 250;
    const decision = await sut.decide({
      selectors: { tenant, principal: 'svc-42', token: 'sk-raw-token' },
      attributes: { plan: 'pro' },
      cost: 3,
      idempotency_key: 'ob-1',
    });
    const entries = await outboxEntriesOf(new Set([decision.decision_id]));
    expect(entries).toHaveLength(1);
    const [entry] = entries;
    expect(Object.keys(entry).sort()).toEqual(['p', 'r', 't']);
    expect(entry.t).toBe(String(fixedNow));
    expect(entry.r).toBe(
      '[{"remaining":7,"reset_ms":300,"would_deny":false},{"remaining":97,"reset_ms":59750,"would_deny":false}]',
    );
    const payload = JSON.parse(entry.p) as Record<string, unknown>;
    expect(payload).toEqual({
      v: 1,
      outcome: 'allowed',
      id: decision.decision_id,
      policy_set_version: stack.source.current.version,
      tenant,
      selectors: { tenant, principal: 'svc-42', token: expect.stringMatching(/^t_[A-Za-z0-9_-]{22}$/) },
      attributes: { plan: 'pro' },
      cost: 3,
      idempotency_key: 'ob-1',
      policies: [
        {
          name,
          mode: 'enforce',
          key: 'svc-42',
          windows: [
            { name: 'burst', role: 'burst', limit: 10 },
            { name: 'sustained', role: 'sustained', limit: 100 },
          ],
        },
      ],
    });
    expect(entry.p).not.toContain('sk-raw-token');
  });

  it('coalesces denials per second, key and reason, with one sample payload', async () => {
    const name = uniqueName('deny');
    use(policy(name, [win('w', 'fixed_window', 1, 60_000, 'burst')]));
    const tenant = uniqueName('t');
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0) + 10;
    await sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1 });
    const denied = await sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1 });
    await sut.decide({ selectors: { tenant, principal: 'p' }, cost: 1 });
    const denials = `tally:v1:{s${shardOf(tenant, SHARDS)}}:denials`;
    const field = `${Math.floor(fixedNow / 1000)}|${name}|p|burst_quota_exhausted`;
    expect(await redis.hget(denials, field)).toBe('2');
    const sample = JSON.parse((await redis.hget(denials, `${field}#p`)) ?? '{}') as Record<string, unknown>;
    expect(sample).toMatchObject({
      v: 1,
      outcome: 'denied',
      reason: 'burst_quota_exhausted',
      id: denied.decision_id,
      tenant,
    });
    expect(await redis.hget(denials, `${field}#r`)).toBe(
      '[{"remaining":0,"reset_ms":59990,"would_deny":true}]',
    );
    expect(await outboxEntriesOf(new Set([denied.decision_id]))).toEqual([]);
  });

  it('allows a request no policy applies to, with policies [] and still one ledger entry', async () => {
    fixedNow = undefined;
    use(policy(uniqueName('other'), [win('w', 'fixed_window', 1, 60_000)], { match: { route: ['never'] } }));
    const decision = await sut.decide({
      selectors: { tenant: uniqueName('t') },
      cost: 5,
      idempotency_key: 'u-1',
    });
    expect(decision).toMatchObject({ allowed: true, kind: 'allowed', policies: [], binding: null });
    const [entry] = await outboxEntriesOf(new Set([decision.decision_id]));
    expect(entry.r).toBe('[]');
  });

  it('refuses a request no policy applies to above the global ceiling (default 1,000,000): 413, nothing written', async () => {
    fixedNow = undefined;
    use(policy(uniqueName('other'), [win('w', 'fixed_window', 1, 60_000)], { match: { route: ['never'] } }));
    const tenant = uniqueName('t');
    const [above, far, at] = await sut.decideBatch([
      { selectors: { tenant }, cost: DEFAULT_MAX_COST + 1, idempotency_key: 'big-1' },
      { selectors: { tenant }, cost: Number.MAX_SAFE_INTEGER },
      { selectors: { tenant }, cost: DEFAULT_MAX_COST },
    ]);
    expect([above, far, at].map((d) => [d.kind, d.code])).toEqual([
      ['too_large', 'cost.too_large'],
      ['too_large', 'cost.too_large'],
      ['allowed', null],
    ]);
    expect(await outboxEntriesOf(new Set([above.decision_id, far.decision_id]))).toEqual([]);
    expect(await outboxEntriesOf(new Set([at.decision_id]))).toHaveLength(1);
    expect(await redis.keys(`tally:v1:*:idem:${tenant}:*`)).toEqual([]);
  });

  it('refuses bad input with a 4xx before touching Redis', async () => {
    const name = uniqueName('bad');
    use(policy(name, [win('w', 'fixed_window', 5, 60_000)], { key: ['tenant', 'principal'] }));
    const tenant = uniqueName('t');
    const outcomes = await Promise.all([
      sut.decide({ selectors: { tenant }, cost: 1 }),
      sut.decide({ selectors: { tenant, principal: 'x'.repeat(257) }, cost: 1 }),
      sut.decide({ selectors: { tenant, principal: 'p' }, cost: 6 }),
      sut.decide({ selectors: { tenant, principal: 'p' }, cost: 2.5 }),
    ]);
    expect(outcomes.map((d) => [d.kind, d.code, d.reason])).toEqual([
      ['invalid', 'selector.identity_missing', 'selector_identity_missing'],
      ['invalid', 'selector.identity_invalid', 'selector_identity_invalid'],
      ['too_large', 'cost.too_large', null],
      ['invalid', 'cost.invalid', null],
    ]);
    expect(await redis.keys(`tally:v1:*:${name}:*`)).toEqual([]);
  });

  it('decides a batch in one pipeline, each request on its own', async () => {
    fixedNow = undefined;
    const name = uniqueName('batch');
    use(policy(name, [win('w', 'fixed_window', 3, 3_600_000)]));
    const tenants = [uniqueName('t'), uniqueName('t')];
    const requests: DecisionRequest[] = [0, 1, 2, 3].flatMap(() =>
      tenants.map((tenant) => ({ selectors: { tenant, principal: 'p' }, cost: 1 })),
    );
    requests.push({ selectors: { tenant: tenants[0] }, cost: 1 });
    const decisions = await sut.decideBatch(requests);
    expect(decisions.map((d) => d.kind)).toEqual([
      ...Array<string>(6).fill('allowed'),
      'denied',
      'denied',
      'invalid',
    ]);
  });

  it('runs a batch of one script (one Envoy descriptor) as a single command, without a pipeline', async () => {
    fixedNow = undefined;
    const name = uniqueName('one');
    use(policy(name, [win('w', 'fixed_window', 1, 3_600_000)]));
    const request = { selectors: { tenant: uniqueName('t'), principal: 'p' }, cost: 1 };
    const pipelines = vi.spyOn(stack.sutRedis, 'pipeline');
    try {
      const decisions = [...(await sut.decideBatch([request])), ...(await sut.decideBatch([request]))];

      expect(decisions.map((d) => d.kind)).toEqual(['allowed', 'denied']);
      expect(pipelines).not.toHaveBeenCalled();
    } finally {
      pipelines.mockRestore();
    }
  });

  it('reports the state of one policy: counters, remaining and reset', async () => {
    const name = uniqueName('state');
    use(
      policy(name, [win('w', 'sliding_window', 10, 60_000), win('b', 'token_bucket', 4, 1_000, 'burst')], {
        match: { route: ['evaluate'] },
      }),
    );
    const sel = { tenant: uniqueName('t'), principal: 'p', route: 'evaluate' };
    fixedNow = Date.UTC(2026, 10, 30, 9, 0, 0) + 15_000;
    await sut.decide({ selectors: sel, cost: 3 });
    // the state endpoint needs no route: it reads the policy's windows for the key, matched or not
    const result = await sut.state(name, { tenant: sel.tenant, principal: 'p' });
    expect(result).toEqual({
      ok: true,
      state: {
        policy: name,
        mode: 'enforce',
        key: 'p',
        now_ms: fixedNow,
        windows: [
          {
            name: 'w',
            role: 'sustained',
            algorithm: 'sliding_window',
            limit: 10,
            period_ms: 60_000,
            remaining: 7,
            reset_ms: 105_000,
            counters: { bucket: Math.floor(fixedNow / 60_000), current: 3, previous: 0 },
          },
          {
            name: 'b',
            role: 'burst',
            algorithm: 'token_bucket',
            limit: 4,
            period_ms: 1_000,
            remaining: 1,
            reset_ms: 750,
            counters: { tokens: 1, updated_ms: fixedNow },
          },
        ],
      },
    });
    expect(await sut.state('no-such-policy', {})).toMatchObject({ ok: false, kind: 'not_found' });
    expect(await sut.state(name, { tenant: sel.tenant })).toMatchObject({
      ok: false,
      kind: 'invalid',
      code: 'selector.identity_missing',
    });
  });

  it('wires through EngineModule.forRoot with a policy source object', async () => {
    fixedNow = undefined;
    const name = uniqueName('module');
    const url = new URL(testEnv().redisUrl);
    url.pathname = `/${DB}`;
    const set: PolicySet = {
      version: 'm',
      policies: [policy(name, [win('w', 'fixed_window', 2, 60_000)])],
      loadedAt: 0,
    };
    const moduleRef = await Test.createTestingModule({
      imports: [
        EngineModule.forRoot({
          options: {
            redis: { mode: 'single', url: url.toString() },
            shards: SHARDS,
            backendTimeoutMs: 2_000,
            idempotencyTtlMs: 60_000,
            tokenSecret: SECRET,
          },
          policySource: { current: set },
        }),
      ],
    }).compile();
    await moduleRef.init();
    try {
      const decisions = moduleRef.get(DecisionService);
      const d = await decisions.decide({ selectors: { tenant: uniqueName('t'), principal: 'p' }, cost: 2 });
      expect(d).toMatchObject({ allowed: true, policies: [{ name, windows: [{ remaining: 0 }] }] });
      expect(moduleRef.get(EngineService).health()).toEqual({
        status: 'healthy',
        breaker: 'closed',
        nodes: { redis: 'closed' },
        connection: 'ready',
      });
    } finally {
      await moduleRef.close();
    }
  });
});
