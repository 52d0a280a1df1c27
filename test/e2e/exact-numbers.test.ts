/**
 * The largest numbers Tally accepts, end to end: limits and overrides of 2^53 − 1 come back exact in
 * the HTTP answer (body and headers), in an idempotent replay, in the state endpoint and in the outbox
 * entry the relay turns into the ledger's events; numbers past 2^53 − 1 are refused with a stable
 * code. Real: the decision API in this process over HTTP (DecisionApiHarness), a PrivateRedis of its
 * own (no relay drains its outbox streams), the events' builders and validators.
 *
 * Why odd values near 2^53 matter: a Redis integer reply above 2^53 − 58 is decoded by the client
 * through a sum past 2^53, so 2^53 − 1 arrived as 2^53 (the limit of a 2^53 − 1 override did); 10^14
 * and more lost digits in an idempotency record (Lua's JSON encoder keeps 14).
 */
import { type OverrideItem } from '@tally/api-contract';
import {
  parseDecisionEvent,
  parseUsageEvent,
  usageEventFromOutbox,
  decisionEventFromOutbox,
  type OutboxPayload,
} from '@tally/events';
import { PrivateRedis, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, DecisionApiHarness, type DecisionBody } from './support/decision-api.harness';

const MAX = Number.MAX_SAFE_INTEGER; // 9007199254740991
/** The largest sliding_window limit with a 1 ms period (its maths holds 3 × limit × period). */
const SLIDING_MAX = Math.floor(MAX / 3); // 3002399751580330
const run = uniqueName('exact');
const P = { huge: `${run}-huge`, small: `${run}-small` };
const POLICIES = `
policies:
  - name: ${P.huge}
    match: { route: huge }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: ${MAX}, period: 1h }
      - { name: bucket, role: burst, algorithm: token_bucket, limit: ${MAX}, period: 1ms }
      - { name: sliding, role: sustained, algorithm: sliding_window, limit: ${SLIDING_MAX}, period: 1ms }
  - name: ${P.small}
    match: { route: small }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
`;

let redis: PrivateRedis;
let sut: DecisionApiHarness;
const admin = { token: ADMIN_TOKEN };

/** The outbox entry of a decision, from every shard stream of the private Redis. */
async function outboxEntry(decisionId: string): Promise<{ p: string; t: string; r: string }> {
  const streams = await redis.client.keys('tally:v1:{s*}:outbox');
  for (const stream of streams)
    for (const [, flat] of await redis.client.xrange(stream, '-', '+')) {
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
      // (override changes and lease releases are entries of other fields: no `p`)
      if (fields.p !== undefined && (JSON.parse(fields.p) as OutboxPayload).id === decisionId)
        return { p: fields.p, t: fields.t, r: fields.r };
    }
  throw new Error(`no outbox entry for ${decisionId}`);
}

beforeAll(async () => {
  redis = await PrivateRedis.start();
  sut = await DecisionApiHarness.start({ redisUrl: redis.url, policies: POLICIES, contract: true });
});
afterAll(async () => {
  await sut?.close();
  await redis?.stop();
});

describe('numbers up to 2^53 − 1, end to end', () => {
  it('answers limits of 2^53 − 1 exactly: peek, decision, idempotent replay, outbox entry', async () => {
    const tenant = uniqueName('whale');
    const ask = (cost: number, idempotency_key?: string) =>
      sut.decide<DecisionBody>({ selectors: { tenant, route: 'huge' }, cost, idempotency_key });

    // a peek reports the full limits
    const peek = await ask(0);
    expect(peek.status).toBe(200);
    expect(peek.body.policies[0].windows).toEqual([
      expect.objectContaining({ name: 'hourly', limit: MAX, remaining: MAX }),
      expect.objectContaining({ name: 'bucket', limit: MAX, remaining: MAX }),
      expect.objectContaining({ name: 'sliding', limit: SLIDING_MAX, remaining: SLIDING_MAX }),
    ]);

    // a decision of 2 units, with an idempotency key, then its replay
    const first = await ask(2, 'k-1');
    const replay = await ask(2, 'k-1');
    expect(first.status).toBe(200);
    const windows = [
      expect.objectContaining({ name: 'hourly', limit: MAX, remaining: MAX - 2 }),
      expect.objectContaining({ name: 'bucket', limit: MAX, remaining: MAX - 2 }),
      expect.objectContaining({ name: 'sliding', limit: SLIDING_MAX, remaining: SLIDING_MAX - 2 }),
    ];
    expect(first.body.policies[0].windows).toEqual(windows);
    expect(replay.body).toMatchObject({ replayed: true, decision_id: first.body.decision_id });
    expect(replay.body.policies[0].windows).toEqual(windows);
    expect(first.headers.get('ratelimit-limit')).toBe(String(SLIDING_MAX));
    expect(first.headers.get('ratelimit-remaining')).toBe(String(SLIDING_MAX - 2));

    // a decision without an idempotency key (decide.lua's fast path): 2 more units
    const plain = await ask(2);
    const [hourly, bucket] = plain.body.policies[0].windows;
    expect(hourly).toMatchObject({ limit: MAX, remaining: MAX - 4 });
    // the bucket refills its whole limit every millisecond: 2 or 4 units short of full
    expect([MAX - 2, MAX - 4]).toContain(bucket.remaining);

    // the outbox entry, and the usage and decision events the relay builds from it, carry them too
    const entry = await outboxEntry(first.body.decision_id);
    expect(JSON.parse(entry.r)).toEqual([
      { remaining: MAX - 2, reset_ms: expect.any(Number), would_deny: false },
      { remaining: MAX - 2, reset_ms: expect.any(Number), would_deny: false },
      { remaining: SLIDING_MAX - 2, reset_ms: expect.any(Number), would_deny: false },
    ]);
    const usage = usageEventFromOutbox(entry);
    expect(usage?.data.policies[0].windows).toEqual([
      expect.objectContaining({ limit: MAX, remaining: MAX - 2 }),
      expect.objectContaining({ limit: MAX, remaining: MAX - 2 }),
      expect.objectContaining({ limit: SLIDING_MAX, remaining: SLIDING_MAX - 2 }),
    ]);
    expect(parseUsageEvent(JSON.stringify(usage)).ok).toBe(true);
    expect(parseDecisionEvent(JSON.stringify(decisionEventFromOutbox(entry))).ok).toBe(true);
  });

  it('applies an override of 2^53 − 1 exactly: answer, state endpoint, outbox entry', async () => {
    const tenant = uniqueName('raised');
    const path = `/v1/overrides/${P.small}/${tenant}`;
    const put = await sut.call<OverrideItem>('PUT', path, {
      ...admin,
      body: { limits: { hourly: MAX }, reason: 'unlimited for the migration' },
    });
    expect(put.status).toBe(201);
    expect(put.body.limits).toEqual({ hourly: MAX });

    const ask = (cost: number) => sut.decide<DecisionBody>({ selectors: { tenant, route: 'small' }, cost });
    const peek = await ask(0);
    expect(peek.body.policies[0].windows[0]).toMatchObject({ limit: MAX, remaining: MAX });
    const spent = await ask(3);
    expect(spent.status).toBe(200);
    expect(spent.body.policies[0]).toMatchObject({
      override: { version: put.body.version },
      windows: [{ name: 'hourly', limit: MAX, remaining: MAX - 3 }],
    });
    expect(spent.headers.get('ratelimit-limit')).toBe(String(MAX));

    const state = await sut.call<{ windows: Record<string, unknown>[] }>(
      'GET',
      `/v1/policies/${P.small}/state?tenant=${tenant}`,
      admin,
    );
    expect(state.status).toBe(200);
    expect(state.body.windows[0]).toMatchObject({ limit: MAX, remaining: MAX - 3, counters: { count: 3 } });

    const entry = await outboxEntry(spent.body.decision_id);
    expect(JSON.parse(entry.r)).toEqual([
      {
        remaining: MAX - 3,
        reset_ms: expect.any(Number),
        would_deny: false,
        override: put.body.version,
        limit: MAX,
      },
    ]);
    const usage = usageEventFromOutbox(entry);
    expect(usage?.data.policies[0].windows[0]).toMatchObject({ remaining: MAX - 3, override_limit: MAX });
    expect(parseUsageEvent(JSON.stringify(usage)).ok).toBe(true);
  });

  it('refuses numbers past 2^53 − 1 with a stable code, where the input carries them', async () => {
    const tenant = uniqueName('past');
    // 2^53 and 2^53 + 1 (which JSON parses to 2^53): neither is the number the caller meant
    for (const raw of ['9007199254740992', '9007199254740993', '1e300']) {
      const cost = await sut.call('POST', '/v1/decisions', {
        raw: `{"selectors":{"tenant":"${tenant}","route":"huge"},"cost":${raw}}`,
      });
      expect(cost.status, raw).toBe(400);
      expect(cost.body, raw).toMatchObject({ code: 'cost.invalid' });

      const override = await sut.call('PUT', `/v1/overrides/${P.small}/${tenant}`, {
        ...admin,
        raw: `{"limits":{"hourly":${raw}},"reason":"too much"}`,
      });
      expect(override.status, raw).toBe(400);
      expect(override.body, raw).toMatchObject({ code: 'request.invalid' });
    }
    // and nothing was counted or stored meanwhile
    const peek = await sut.decide<DecisionBody>({ selectors: { tenant, route: 'small' }, cost: 0 });
    expect(peek.body.policies[0]).not.toHaveProperty('override');
    expect(peek.body.policies[0].windows[0]).toMatchObject({ limit: 10, remaining: 10 });
  });
});
