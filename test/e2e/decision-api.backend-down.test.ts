/**
 * The decision API with its Redis unreachable (a port nothing listens on, so the shared Redis is
 * never touched): fail_closed refuses with 503 and the cause, fail_open lets traffic through marked
 * degraded, local_fallback enforces from the API's own counters (denials are 429 by quota, marked
 * degraded), readiness says so, and a backend failure is never confused with quota.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import {
  ADMIN_TOKEN,
  DecisionApiHarness,
  metricSum,
  type DecisionBody,
} from './support/decision-api.harness';

const run = uniqueName('e2e-down');
const P = {
  closed: `${run}-closed`,
  open: `${run}-open`,
  local: `${run}-local`,
  bothLocal: `${run}-both-local`,
  bothOpen: `${run}-both-open`,
};
const BACKEND_REASONS = ['backend_timeout', 'backend_unavailable', 'backend_error'];

let sut: DecisionApiHarness;

beforeAll(async () => {
  sut = await DecisionApiHarness.start({
    // Port 1 (tcpmux) is not served on these hosts: every connection attempt is refused.
    redisUrl: 'redis://127.0.0.1:1',
    policies: `
policies:
  - name: ${P.closed}
    match: { route: closed }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
    on_backend_failure: fail_closed
  - name: ${P.open}
    match: { route: open }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
    on_backend_failure: fail_open
  - name: ${P.local}
    match: { route: local }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 3, period: 1h }
    on_backend_failure: local_fallback
    local_fallback_overflow: fail_open
  - name: ${P.bothLocal}
    match: { route: both }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 2, period: 1h }
    on_backend_failure: local_fallback
    local_fallback_overflow: fail_open
  - name: ${P.bothOpen}
    match: { route: both }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
    on_backend_failure: fail_open
`,
    env: { TALLY_LOCAL_FALLBACK_SHARE: '1' },
  });
});
afterAll(async () => {
  await sut.close();
});

describe(DecisionApiModule.name, () => {
  describe('with Redis unreachable', () => {
    it('refuses a fail_closed decision with 503, the cause and Retry-After', async () => {
      const res = await sut.decide<DecisionBody>({ selectors: { tenant: uniqueName('t'), route: 'closed' } });

      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ allowed: false, degraded: false });
      expect(BACKEND_REASONS).toContain(res.body.reason);
      expect(res.body.code).toBe(`backend.${String(res.body.reason).slice('backend_'.length)}`);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    });

    it('lets a fail_open decision through as degraded, with the cause', async () => {
      const res = await sut.decide<DecisionBody>({ selectors: { tenant: uniqueName('t'), route: 'open' } });

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ allowed: true, degraded: true, reason: null, code: null });
      expect(BACKEND_REASONS).toContain(res.body.degraded_cause);
      expect(res.headers.get('retry-after')).toBeNull();
    });

    it('enforces a local_fallback policy from its own counters: the limit allowed, then 429 by quota', async () => {
      const tenant = uniqueName('t');
      const ask = () => sut.decide<DecisionBody>({ selectors: { tenant, route: 'local' } });

      const allowed = [await ask(), await ask(), await ask()];
      const denied = await ask();

      for (const res of allowed) {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ allowed: true, degraded: true, reason: null });
        expect(BACKEND_REASONS).toContain(res.body.degraded_cause);
      }
      expect(allowed[2].headers.get('ratelimit-remaining')).toBe('0');
      expect(denied.status).toBe(429);
      expect(denied.body).toMatchObject({
        allowed: false,
        reason: 'sustained_quota_exhausted',
        code: 'quota.exceeded',
        degraded: true,
      });
      expect(BACKEND_REASONS).toContain(denied.body.degraded_cause);
      expect(Number(denied.headers.get('retry-after'))).toBeGreaterThan(1);
      const metrics = await sut.metrics();
      expect(
        metricSum(metrics, 'tally_local_fallback_decisions_total', { policy: P.local, outcome: 'allowed' }),
      ).toBe(3);
      expect(
        metricSum(metrics, 'tally_local_fallback_decisions_total', { policy: P.local, outcome: 'denied' }),
      ).toBe(1);
      expect(metricSum(metrics, 'tally_local_fallback_keys', {})).toBe(1);
      expect(metricSum(metrics, 'tally_policy_decisions_total', { policy: P.local, outcome: 'denied' })).toBe(
        1,
      );
    });

    it('counts each degraded and each locally denied decision once, and each policy with what it said', async () => {
      // given two policies on one route: one falls back locally (2 per tenant), one fails open
      const before = await sut.metrics();
      const selectors = { tenant: uniqueName('t'), route: 'both' };

      // when 4 decisions are asked
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await sut.decide({ selectors })).status);

      // then 2 were allowed (degraded) and 2 denied by the local counters
      expect(statuses).toEqual([200, 200, 429, 429]);
      const after = await sut.metrics();
      const delta = (labels: Record<string, string>) =>
        metricSum(after, 'tally_decisions_total', labels) -
        metricSum(before, 'tally_decisions_total', labels);
      expect(delta({ outcome: 'degraded' })).toBe(2);
      expect(delta({ outcome: 'denied', reason: 'sustained_quota_exhausted' })).toBe(2);
      expect(delta({})).toBe(4);
      const policy = (name: string, outcome: string) =>
        metricSum(after, 'tally_policy_decisions_total', { policy: name, outcome });
      expect([policy(P.bothLocal, 'degraded'), policy(P.bothLocal, 'denied')]).toEqual([2, 2]);
      expect([policy(P.bothOpen, 'degraded'), policy(P.bothOpen, 'denied_by_other')]).toEqual([2, 2]);
      expect(policy(P.bothOpen, 'denied')).toBe(0);
    });

    it('shows the fail mode and its overflow in the policy list', async () => {
      const res = await sut.call<{ policies: Record<string, unknown>[] }>('GET', '/v1/policies', {
        token: ADMIN_TOKEN,
      });

      expect(res.body.policies.find((p) => p.name === P.local)).toMatchObject({
        on_backend_failure: 'local_fallback',
        local_fallback_overflow: 'fail_open',
      });
      expect(res.body.policies.find((p) => p.name === P.open)).not.toHaveProperty('local_fallback_overflow');
    });

    it('answers the state endpoint with 503, not 500', async () => {
      const res = await sut.call('GET', `/v1/policies/${P.closed}/state?tenant=x`, {
        token: ADMIN_TOKEN,
      });

      expect(res.status).toBe(503);
      expect(String(res.body.code)).toMatch(/^backend\./);
    });

    it('reports itself unavailable on /readyz and counts the failures', async () => {
      const ready = await sut.call<{ status: string }>('GET', '/readyz', { token: null });
      const metrics = await sut.metrics();

      expect(ready.status).toBe(503);
      expect(ready.body.status).toBe('unavailable');
      expect(metricSum(metrics, 'tally_backend_errors_total', {})).toBeGreaterThanOrEqual(2);
      expect(
        metricSum(metrics, 'tally_policy_decisions_total', { policy: P.open, outcome: 'degraded' }),
      ).toBe(1);
    });
  });
});
