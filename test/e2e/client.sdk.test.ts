/**
 * The SDK end to end: `TallyClient` over real HTTP into the real decision API (in process, Fastify),
 * real Redis. What each answer means to a caller: results for 200/409/413/429, exceptions for its own
 * bugs, and the parsed RateLimit headers.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TallyClient, TallyRequestError } from '@tally/client';
import { uniqueName } from '@tally/testing';
import { CALLER_TOKEN, DecisionApiHarness, ULID } from './support/decision-api.harness';

const run = uniqueName('e2e-client');
const P = { hourly: `${run}-hourly`, costly: `${run}-costly` };
const POLICIES = `
policies:
  - name: ${P.hourly}
    match: { route: hourly }
    key: [tenant]
    windows:
      - { name: burst, role: burst, algorithm: token_bucket, limit: 50, period: 1s }
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 2, period: 1h }
  - name: ${P.costly}
    match: { route: costly }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
    max_cost: 5
`;

let api: DecisionApiHarness;
let sut: TallyClient;
const tenant = (): string => uniqueName('acme');

beforeAll(async () => {
  api = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES });
  // A generous deadline: the API shares two cores with the test runner; deadlines are tested apart.
  sut = new TallyClient({ baseUrl: api.baseUrl, token: CALLER_TOKEN, timeoutMs: 5000, failMode: 'closed' });
});
afterAll(async () => {
  sut.close();
  await api.close();
});

describe(TallyClient.name, () => {
  describe('decide', () => {
    it('allows, then denies at the limit with the reason, retry-after and parsed headers', async () => {
      const selectors = { tenant: tenant(), route: 'hourly' };

      const first = await sut.decide({ selectors });
      const second = await sut.decide({ selectors });
      const third = await sut.decide({ selectors });

      expect(first).toMatchObject({
        status: 200,
        allowed: true,
        decision_id: expect.stringMatching(ULID),
        reason: null,
        code: null,
        degraded: false,
        replayed: false,
        rateLimit: {
          binding: { policy: P.hourly, window: 'hourly', limit: 2, remaining: 1 },
          quotas: [
            { id: `${P.hourly}.burst`, limit: 50 },
            { id: `${P.hourly}.hourly`, limit: 2 },
          ],
          retryAfterSeconds: null,
        },
      });
      expect(first.failure).toBeUndefined();
      expect(second).toMatchObject({ status: 200, allowed: true, rateLimit: { binding: { remaining: 0 } } });
      expect(third).toMatchObject({
        status: 429,
        allowed: false,
        reason: 'sustained_quota_exhausted',
        code: 'quota.exceeded',
        rateLimit: { binding: { policy: P.hourly, window: 'hourly', remaining: 0 } },
      });
      expect(third.retry_after_ms).toBeGreaterThan(0);
      expect(third.rateLimit.retryAfterSeconds).toBe(Math.max(1, Math.ceil(third.retry_after_ms / 1000)));
      expect(third.rateLimitHeaders).toMatchObject({
        'ratelimit-name': P.hourly,
        'ratelimit-remaining': '0',
        'retry-after': String(third.rateLimit.retryAfterSeconds),
      });
      // The burst bucket refills as the test runs, so only the sustained window's count is exact.
      expect(third.policies[0].windows[1]).toMatchObject({ name: 'hourly', remaining: 0 });
    });

    it('replays an idempotent request without spending, and answers a changed one 409', async () => {
      const selectors = { tenant: tenant(), route: 'hourly' };
      const key = uniqueName('idem');

      const original = await sut.decide({ selectors, idempotency_key: key });
      const replay = await sut.decide({ selectors, idempotency_key: key });
      const conflict = await sut.decide({ selectors, cost: 2, idempotency_key: key });

      expect(original).toMatchObject({ status: 200, allowed: true, replayed: false });
      expect(replay).toMatchObject({
        status: 200,
        allowed: true,
        replayed: true,
        decision_id: original.decision_id,
      });
      expect(conflict).toMatchObject({ status: 409, allowed: false, code: 'idempotency.conflict' });
      expect(await api.remaining(P.hourly, selectors)).toMatchObject({ hourly: 1 });
    });

    it('answers a cost above max_cost as a 413 result that spends nothing', async () => {
      const selectors = { tenant: tenant(), route: 'costly' };

      const res = await sut.decide({ selectors, cost: 6 });

      expect(res).toMatchObject({ status: 413, allowed: false, code: 'cost.too_large' });
      expect(await api.remaining(P.costly, selectors)).toEqual({ hourly: 100 });
    });

    it('throws TallyRequestError for a request Tally rejects as malformed', async () => {
      const call = sut.decide({ selectors: { tenant: tenant(), route: 'hourly' }, cost: -1 });

      await expect(call).rejects.toBeInstanceOf(TallyRequestError);
      await expect(call).rejects.toMatchObject({
        status: 400,
        code: 'request.invalid',
        errors: [expect.objectContaining({ path: 'cost' })],
      });
    });

    it('throws TallyRequestError with the reason for an unidentifiable caller', async () => {
      const call = sut.decide({ selectors: { route: 'hourly' } });

      await expect(call).rejects.toMatchObject({
        status: 400,
        code: 'selector.identity_missing',
        reason: 'selector_identity_missing',
      });
    });

    it('throws TallyRequestError for a wrong token instead of applying the fail mode', async () => {
      const wrong = new TallyClient({ baseUrl: api.baseUrl, token: 'not-a-token', timeoutMs: 5000 });

      try {
        await expect(
          wrong.decide({ selectors: { tenant: tenant(), route: 'hourly' } }),
        ).rejects.toMatchObject({
          name: 'TallyRequestError',
          status: 401,
        });
      } finally {
        wrong.close();
      }
    });
  });

  describe('decideBatch', () => {
    it('answers every item in order: decisions and invalid items side by side', async () => {
      const selectors = { tenant: tenant(), route: 'hourly' };

      const sutResults = await sut.decideBatch([
        { selectors },
        { selectors, cost: 2 },
        { selectors, cost: -1 },
        { selectors: { tenant: tenant(), route: 'costly' }, cost: 9 },
      ]);

      expect(sutResults).toMatchObject([
        { ok: true, decision: { status: 200, allowed: true, decision_id: expect.stringMatching(ULID) } },
        { ok: true, decision: { status: 429, allowed: false, reason: 'sustained_quota_exhausted' } },
        { ok: false, error: { status: 400, code: 'request.invalid' } },
        { ok: true, decision: { status: 413, code: 'cost.too_large' } },
      ]);
      expect(sutResults[2].ok === false && sutResults[2].error).toBeInstanceOf(TallyRequestError);
    });

    it('throws TallyRequestError when the batch itself is invalid', async () => {
      await expect(sut.decideBatch([])).rejects.toMatchObject({ status: 400, code: 'request.invalid' });
    });
  });
});
