/**
 * The decision API end to end: real HTTP into the real DecisionApiModule on Fastify, real Redis.
 * Statuses, bodies and headers exactly as DESIGN §3, and what each answer did (or did not) consume,
 * read back through the admin state endpoint.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import {
  ADMIN_TOKEN,
  DecisionApiHarness,
  metricSum,
  ULID,
  type DecisionBody,
} from './support/decision-api.harness';
import { OpenApiContract } from './support/openapi-contract';

const run = uniqueName('e2e-dec');
const P = {
  burst: `${run}-burst`,
  sustained: `${run}-sustained`,
  costly: `${run}-costly`,
  idem: `${run}-idem`,
  token: `${run}-token`,
};
const POLICIES = `
policies:
  - name: ${P.burst}
    match: { route: burst }
    key: [tenant, principal]
    windows:
      - { name: burst, role: burst, algorithm: token_bucket, limit: 3, period: 1m }
      - { name: sustained, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
    on_backend_failure: fail_closed
  - name: ${P.sustained}
    match: { route: sustained }
    key: [tenant]
    windows:
      - { name: burst, role: burst, algorithm: token_bucket, limit: 50, period: 1s }
      - { name: daily, role: sustained, algorithm: fixed_window, limit: 2, period: 1d }
  - name: ${P.costly}
    match: { route: costly }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: sliding_window, limit: 100, period: 1h }
    max_cost: 5
  - name: ${P.idem}
    match: { route: idem }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
  - name: ${P.token}
    match: { route: token }
    key: [tenant, token]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
`;

let sut: DecisionApiHarness;
const tenant = (): string => uniqueName('acme');

beforeAll(async () => {
  sut = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES, contract: true });
});
afterAll(async () => {
  await sut.close();
});

describe(DecisionApiModule.name, () => {
  describe('POST /v1/decisions', () => {
    it('answers 200 with the decision body and the RateLimit headers of the binding window', async () => {
      const selectors = { tenant: tenant(), principal: 'svc-42', route: 'burst' };

      const res = await sut.decide<DecisionBody>({ selectors, cost: 1 });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        allowed: true,
        decision_id: expect.stringMatching(ULID),
        reason: null,
        code: null,
        retry_after_ms: 0,
        degraded: false,
        replayed: false,
        policies: [
          {
            name: P.burst,
            mode: 'enforce',
            windows: [
              { name: 'burst', role: 'burst', limit: 3, remaining: 2, reset_ms: expect.any(Number) },
              {
                name: 'sustained',
                role: 'sustained',
                limit: 100,
                remaining: 99,
                reset_ms: expect.any(Number),
              },
            ],
          },
        ],
      });
      // One token of three refills in period/limit = 20 s.
      const burst = res.body.policies[0].windows[0];
      expect(burst.reset_ms).toBeGreaterThan(19_000);
      expect(burst.reset_ms).toBeLessThanOrEqual(20_000);
      expect(res.headers.get('ratelimit-name')).toBe(P.burst);
      expect(res.headers.get('ratelimit-limit')).toBe('3');
      expect(res.headers.get('ratelimit-remaining')).toBe('2');
      expect(res.headers.get('ratelimit-reset')).toBe('20');
      expect(res.headers.get('ratelimit-policy')).toBe(
        `"${P.burst}.burst";q=3, "${P.burst}.sustained";q=100`,
      );
      expect(res.headers.get('ratelimit')).toBe(`"${P.burst}.burst";r=2;t=20`);
      expect(res.headers.get('retry-after')).toBeNull();
    });

    it('answers 429 burst_quota_exhausted with Retry-After, and the denial consumes nothing', async () => {
      // given a burst window of 3 spent
      const selectors = { tenant: tenant(), principal: 'svc-1', route: 'burst' };
      for (let i = 0; i < 3; i++) expect((await sut.decide({ selectors })).status).toBe(200);

      // when a fourth request comes
      const res = await sut.decide<DecisionBody>({ selectors });

      // then it is denied by the burst window, with a retry-after of one refill
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({
        allowed: false,
        reason: 'burst_quota_exhausted',
        code: 'quota.exceeded',
        degraded: false,
        replayed: false,
      });
      expect(res.body.retry_after_ms).toBeGreaterThan(19_000);
      expect(res.body.retry_after_ms).toBeLessThanOrEqual(20_000);
      expect(Number(res.headers.get('retry-after'))).toBe(Math.ceil(res.body.retry_after_ms / 1000));
      expect(res.headers.get('ratelimit-name')).toBe(P.burst);
      expect(res.headers.get('ratelimit-remaining')).toBe('0');
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"${P.burst}\\.burst";r=0;t=\\d+$`));
      // and the sustained window was not charged for the denied request
      expect(await sut.remaining(P.burst, selectors)).toEqual({ burst: 0, sustained: 97 });
    });

    it('answers 429 sustained_quota_exhausted when the sustained window is spent', async () => {
      // given a daily window of 2 spent
      const selectors = { tenant: tenant(), route: 'sustained' };
      for (let i = 0; i < 2; i++) expect((await sut.decide({ selectors })).status).toBe(200);

      // when a third request comes
      const res = await sut.decide<DecisionBody>({ selectors });

      // then the daily window denies until the next UTC day bucket, and burst was not charged
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({ reason: 'sustained_quota_exhausted', code: 'quota.exceeded' });
      expect(res.body.retry_after_ms).toBeGreaterThan(0);
      expect(res.body.retry_after_ms).toBeLessThanOrEqual(86_400_000);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBe(Math.max(1, Math.ceil(res.body.retry_after_ms / 1000)));
      expect(res.headers.get('ratelimit-name')).toBe(P.sustained);
      expect(res.headers.get('ratelimit-limit')).toBe('2');
      const left = await sut.remaining(P.sustained, selectors);
      expect(left.daily).toBe(0);
      expect(left.burst).toBeGreaterThanOrEqual(48);
    });

    it('replays an idempotent decision with the same decision_id and consumes nothing', async () => {
      // given an allowed decision with an idempotency key
      const selectors = { tenant: tenant(), route: 'idem' };
      const first = await sut.decide<DecisionBody>({ selectors, cost: 2, idempotency_key: 'b-77' });
      expect(first.status).toBe(200);
      expect(first.body.replayed).toBe(false);

      // when the same request is sent again
      const again = await sut.decide<DecisionBody>({ selectors, cost: 2, idempotency_key: 'b-77' });

      // then the stored decision comes back and the window still shows one charge
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({
        allowed: true,
        replayed: true,
        decision_id: first.body.decision_id,
        policies: [{ name: P.idem, mode: 'enforce' }],
      });
      expect(await sut.remaining(P.idem, selectors)).toEqual({ hourly: 8 });
    });

    it('answers 409 idempotency.conflict for the same key with another request, consuming nothing', async () => {
      const selectors = { tenant: tenant(), route: 'idem' };
      expect((await sut.decide({ selectors, cost: 1, idempotency_key: 'k-1' })).status).toBe(200);

      const res = await sut.decide<DecisionBody>({ selectors, cost: 3, idempotency_key: 'k-1' });

      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ allowed: false, code: 'idempotency.conflict', replayed: false });
      expect(res.headers.get('retry-after')).toBeNull();
      expect(await sut.remaining(P.idem, selectors)).toEqual({ hourly: 9 });
    });

    it('answers 413 cost.too_large above max_cost, however large, consuming nothing', async () => {
      const selectors = { tenant: tenant(), route: 'costly' };
      const refused = { outcome: 'refused', reason: 'cost.too_large' };
      const refusedBefore = metricSum(await sut.metrics(), 'tally_decisions_total', refused);

      const above = await sut.decide<DecisionBody>({ selectors, cost: 6 });
      const farAbove = await sut.decide<DecisionBody>({ selectors, cost: 3_000_000_000 });

      for (const res of [above, farAbove]) {
        expect(res.status).toBe(413);
        expect(res.body).toMatchObject({ allowed: false, code: 'cost.too_large', reason: null });
      }
      expect(await sut.remaining(P.costly, selectors)).toEqual({ hourly: 100 });
      // A refusal is not traffic that no policy applies to.
      expect(metricSum(await sut.metrics(), 'tally_decisions_total', refused)).toBe(refusedBefore + 2);
      expect((await sut.decide({ selectors, cost: 5 })).status).toBe(200);
      expect(await sut.remaining(P.costly, selectors)).toEqual({ hourly: 95 });
    });

    it('treats cost 0 as a peek: it reports the state and consumes nothing', async () => {
      // given one unit spent
      const selectors = { tenant: tenant(), route: 'idem' };
      expect((await sut.decide({ selectors })).status).toBe(200);

      // when peeking twice
      const peek = await sut.decide<DecisionBody>({ selectors, cost: 0 });
      await sut.decide({ selectors, cost: 0 });

      // then the peek shows the spent unit and nothing more is spent
      expect(peek.status).toBe(200);
      expect(peek.body).toMatchObject({
        allowed: true,
        policies: [{ name: P.idem, windows: [{ remaining: 9 }] }],
      });
      expect(peek.headers.get('ratelimit-remaining')).toBe('9');
      expect(await sut.remaining(P.idem, selectors)).toEqual({ hourly: 9 });
    });

    it('allows a request no policy applies to with policies: [] and counts it as unmatched', async () => {
      const unmatched = { outcome: 'allowed', reason: 'unmatched' };
      const before = metricSum(await sut.metrics(), 'tally_decisions_total', unmatched);

      const res = await sut.decide<DecisionBody>({ selectors: { tenant: tenant(), route: 'elsewhere' } });

      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        allowed: true,
        decision_id: expect.stringMatching(ULID),
        reason: null,
        code: null,
        retry_after_ms: 0,
        degraded: false,
        replayed: false,
        policies: [],
      });
      expect(res.headers.get('ratelimit-name')).toBeNull();
      expect(res.headers.get('ratelimit-policy')).toBeNull();
      expect(metricSum(await sut.metrics(), 'tally_decisions_total', unmatched)).toBe(before + 1);
    });
  });

  describe('token selectors', () => {
    it('never shows a raw token in a response, a state key or a metric', async () => {
      // given a policy keyed by token
      const secret = `tok-${uniqueName('secret')}`;
      const selectors = { tenant: tenant(), token: secret, route: 'token' };

      // when it decides and the state is read back with the same token
      const res = await sut.decide({ selectors });
      const state = await sut.call<{ key: string }>(
        'GET',
        `/v1/policies/${P.token}/state?${new URLSearchParams(selectors).toString()}`,
        { token: ADMIN_TOKEN },
      );

      // then the counter was keyed by the token's HMAC, and the token appears nowhere
      expect(res.status).toBe(200);
      expect(state.status).toBe(200);
      expect(state.body.key).toMatch(/t_[A-Za-z0-9_-]{22}/);
      expect(await sut.remaining(P.token, selectors)).toEqual({ hourly: 9 });
      for (const text of [JSON.stringify(res.body), JSON.stringify(state.body), await sut.metrics()]) {
        expect(text).not.toContain(secret);
      }
    });
  });

  describe('POST /v1/decisions:batch', () => {
    it('routes the literal colon and decides every item with its own status', async () => {
      const t = tenant();
      const res = await sut.call<{ results: (DecisionBody & { status: number })[] }>(
        'POST',
        '/v1/decisions:batch',
        {
          body: {
            requests: [
              { selectors: { tenant: t, route: 'sustained' } },
              { selectors: { tenant: t, route: 'sustained' } },
              { selectors: { tenant: t, route: 'sustained' } },
            ],
          },
        },
      );

      expect(res.status).toBe(200);
      expect(res.body.results.map((r) => [r.status, r.reason])).toEqual([
        [200, null],
        [200, null],
        [429, 'sustained_quota_exhausted'],
      ]);
      expect(new Set(res.body.results.map((r) => r.decision_id)).size).toBe(3);
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', null, 'auth.missing'],
      ['a token nobody issued', 'not-a-token-of-this-server', 'auth.invalid'],
    ])('answers 401 to %s', async (_case, token, code) => {
      const res = await sut.decide({ selectors: { tenant: tenant(), route: 'idem' } }, { token });

      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code, message: expect.any(String) });
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    });

    it.each([
      ['GET', '/v1/policies'],
      ['GET', `/v1/policies/${P.idem}/state?tenant=x`],
      ['POST', '/v1/policies:reload'],
    ])('answers 403 auth.forbidden to a caller token on %s %s', async (method, path) => {
      const res = await sut.call(method, path);

      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'auth.forbidden' });
    });

    it('refuses decisions to the admin token: it administers, it never spends', async () => {
      const res = await sut.decide(
        { selectors: { tenant: tenant(), route: 'idem' } },
        { token: ADMIN_TOKEN },
      );

      expect(res.status).toBe(403);
      expect(res.body).toEqual({
        code: 'auth.forbidden',
        message: 'this call needs a token with the decide role',
      });
    });

    it.each(['/healthz', '/readyz', '/metrics'])('serves %s without a token', async (path) => {
      const res = await sut.call('GET', path, { token: null });

      expect(res.status).toBe(200);
    });
  });

  describe('control and observability', () => {
    it('lists the policies in force to the admin', async () => {
      const res = await sut.call<{ version: string; policies: { name: string }[] }>('GET', '/v1/policies', {
        token: ADMIN_TOKEN,
      });

      expect(res.status).toBe(200);
      expect(res.body.policies.map((p) => p.name)).toEqual([P.burst, P.sustained, P.costly, P.idem, P.token]);
      expect(res.body.version).toMatch(/\S/);
    });

    it('answers 404 policy.not_found for the state of an unknown policy', async () => {
      const res = await sut.call('GET', `/v1/policies/${run}-nope/state?tenant=x`, { token: ADMIN_TOKEN });

      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'policy.not_found' });
    });

    it('reports readiness as healthy with Redis and the policy set', async () => {
      const res = await sut.call<{ status: string }>('GET', '/readyz', { token: null });

      expect(res.body.status).toBe('healthy');
    });

    it('exposes the Tally series in the Prometheus text format', async () => {
      // given at least one allowed and one denied decision of this suite
      const selectors = { tenant: tenant(), route: 'sustained' };
      for (let i = 0; i < 3; i++) await sut.decide({ selectors });

      const res = await sut.call<string>('GET', '/metrics', { token: null });

      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      for (const name of [
        'tally_decisions_total',
        'tally_policy_decisions_total',
        'tally_decision_duration_seconds',
        'tally_backend_errors_total',
        'tally_breaker_state',
        'tally_breaker_open_nodes',
        'tally_policy_reloads_total',
        'tally_policy_set_info',
      ]) {
        expect(res.body).toContain(`# TYPE ${name} `);
      }
      const text = res.body;
      expect(
        metricSum(text, 'tally_policy_decisions_total', { policy: P.sustained, outcome: 'allowed' }),
      ).toBeGreaterThanOrEqual(2);
      expect(
        metricSum(text, 'tally_policy_decisions_total', { policy: P.sustained, outcome: 'denied' }),
      ).toBeGreaterThanOrEqual(1);
      expect(
        metricSum(text, 'tally_decisions_total', { outcome: 'denied', reason: 'sustained_quota_exhausted' }),
      ).toBeGreaterThanOrEqual(1);
      expect(metricSum(text, 'tally_decision_duration_seconds_count', {})).toBeGreaterThan(0);
      expect(text).toMatch(/^tally_breaker_state\{app="decision-api"\} 0$/m);
      expect(text).toMatch(/^tally_breaker_open_nodes\{app="decision-api"\} 0$/m);
      // Labels are policy names and fixed vocabularies, never a selector value.
      expect(text).not.toContain('acme-');
    });
  });

  describe('GET /openapi.json', () => {
    it('serves the OpenAPI 3.1 document without a token, and the answers above were held to it', async () => {
      const res = await sut.call<{ openapi: string; paths: Record<string, unknown> }>(
        'GET',
        '/openapi.json',
        {
          token: null,
        },
      );
      const contract = await OpenApiContract.fetch(sut.baseUrl);

      expect(res.status).toBe(200);
      expect(res.body.openapi).toBe('3.1.0');
      expect(Object.keys(res.body.paths)).toContain('/v1/decisions');
      // the checker the harness applies to every answer of this suite refuses what the document does not allow
      expect(contract.problems('post', '/v1/decisions', 200, { allowed: 'yes' })).not.toEqual([]);
      expect(contract.problems('post', '/v1/decisions', 418, {})).toEqual([
        'post /v1/decisions 418: status not documented',
      ]);
      expect(contract.templateOf('GET', '/v1/policies/p1/state?tenant=a')).toBe('/v1/policies/{name}/state');
    });
  });
});
