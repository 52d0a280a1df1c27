/**
 * Policies changing under a running decision API (real HTTP, real Redis): hot reload from the file
 * and from the API, an invalid file refused while the running set keeps deciding, shadow mode, and
 * group fall-through when the first policy of a group is disabled.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { eventually, uniqueName } from '@tally/testing';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import {
  ADMIN_TOKEN,
  DecisionApiHarness,
  metricSum,
  type DecisionBody,
} from './support/decision-api.harness';

const run = uniqueName('e2e-pol');
const P = {
  capped: `${run}-capped`,
  shadow: `${run}-shadow`,
  first: `${run}-tier-first`,
  next: `${run}-tier-next`,
};

/** The policy file of this suite, with the knobs the tests turn. */
function policies(o: { cappedLimit: number; firstEnabled: boolean }): string {
  return `
policies:
  - name: ${P.capped}
    match: { route: capped }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: ${o.cappedLimit}, period: 1h }
  - name: ${P.shadow}
    mode: shadow
    match: { route: shadow }
    key: [tenant]
    windows:
      - { name: burst, role: burst, algorithm: token_bucket, limit: 2, period: 1h }
  - name: ${P.first}
    group: tier
    enabled: ${o.firstEnabled}
    match: { route: tiered }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 100, period: 1h }
  - name: ${P.next}
    group: tier
    match: { route: tiered }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 50, period: 1h }
`;
}

const INVALID = `
policies:
  - name: ${P.capped}
    key: [tenant, Planet X]
    windows:
      - { name: hourly, role: sustained, algorithm: leaky_bucket, limit: -5, period: 1h }
`;

let sut: DecisionApiHarness;
const tenant = (): string => uniqueName('acme');
const reloads = async (labels: Record<string, string>): Promise<number> =>
  metricSum(await sut.metrics(), 'tally_policy_reloads_total', labels);

beforeAll(async () => {
  sut = await DecisionApiHarness.start({
    redisUrl: inject('redisUrl'),
    policies: policies({ cappedLimit: 2, firstEnabled: true }),
  });
});
afterAll(async () => {
  await sut.close();
});

describe(DecisionApiModule.name, () => {
  describe('hot reload', () => {
    it('follows a rewritten policy file within about 2 s, without a restart', async () => {
      // given a limit of 2, spent
      const selectors = { tenant: tenant(), route: 'capped' };
      for (let i = 0; i < 2; i++) expect((await sut.decide({ selectors })).status).toBe(200);
      expect((await sut.decide({ selectors })).status).toBe(429);
      const applied = await reloads({ outcome: 'applied', trigger: 'file' });

      // when the file is rewritten with a limit of 5
      await sut.writePolicies(policies({ cappedLimit: 5, firstEnabled: true }));

      // then decisions follow the new limit: three more are allowed on the same counter
      const res = await eventually(
        () => sut.decide<DecisionBody>({ selectors, cost: 0 }),
        (r) => r.body.policies[0]?.windows[0]?.limit === 5,
        { timeoutMs: 2500, intervalMs: 50 },
      );
      expect(res.body.policies[0].windows[0]).toMatchObject({ limit: 5, remaining: 3 });
      for (let i = 0; i < 3; i++) expect((await sut.decide({ selectors })).status).toBe(200);
      expect((await sut.decide({ selectors })).status).toBe(429);
      expect(await reloads({ outcome: 'applied', trigger: 'file' })).toBeGreaterThan(applied);
    });

    it('refuses an invalid file on POST /v1/policies:reload with 422 and every error, and keeps deciding', async () => {
      // given a valid set in force
      const before = await sut.call<{ version: string }>('GET', '/v1/policies', { token: ADMIN_TOKEN });
      const rejected = await reloads({ outcome: 'rejected', trigger: 'request' });

      // when an invalid file replaces it and a reload is requested
      await sut.writePolicies(INVALID);
      const res = await sut.reload();

      // then the reload is refused with each error at its path
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({
        code: 'policy.invalid',
        message: expect.stringContaining(before.body.version),
      });
      const errors = res.body.errors as { path: string; message: string }[];
      const paths = errors.map((e) => e.path);
      expect(paths).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^policies\[0\]\.key/),
          expect.stringMatching(/^policies\[0\]\.windows\[0\]\.algorithm/),
          expect.stringMatching(/^policies\[0\]\.windows\[0\]\.limit/),
        ]),
      );
      for (const e of errors) expect(e.message).toMatch(/\S/);
      // and the old set keeps deciding
      const after = await sut.call<{ version: string }>('GET', '/v1/policies', { token: ADMIN_TOKEN });
      expect(after.body.version).toBe(before.body.version);
      const decided = await sut.decide<DecisionBody>({ selectors: { tenant: tenant(), route: 'capped' } });
      expect(decided.status).toBe(200);
      expect(decided.body.policies.map((p) => p.name)).toEqual([P.capped]);
      expect(await reloads({ outcome: 'rejected', trigger: 'request' })).toBe(rejected + 1);
    });

    it('applies a valid file on POST /v1/policies:reload and says whether it changed', async () => {
      // given the invalid file of the previous case is replaced by a valid one (the watcher may apply it first)
      await sut.writePolicies(policies({ cappedLimit: 7, firstEnabled: true }));

      const res = await sut.reload();
      const again = await sut.reload();

      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ version: expect.any(String) });
      expect(again.body).toEqual({ version: res.body.version, changed: false });
      const decided = await sut.decide<DecisionBody>({ selectors: { tenant: tenant(), route: 'capped' } });
      expect(decided.body.policies[0].windows[0]).toMatchObject({ limit: 7, remaining: 6 });
      expect(await reloads({ outcome: 'unchanged', trigger: 'request' })).toBeGreaterThanOrEqual(1);
    });
  });

  describe('shadow mode', () => {
    it('counts over the limit but never denies, reporting would_deny', async () => {
      // given a shadow policy of 2 per hour
      const selectors = { tenant: tenant(), route: 'shadow' };
      const wouldDeny = { policy: P.shadow, mode: 'shadow', outcome: 'would_deny' };
      const counted = await sut
        .metrics()
        .then((m) => metricSum(m, 'tally_policy_decisions_total', wouldDeny));

      // when a third request comes
      const results = [];
      for (let i = 0; i < 3; i++) results.push(await sut.decide<DecisionBody>({ selectors }));

      // then all are allowed; only the third would have been denied
      expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(results.map((r) => r.body.policies[0].would_deny)).toEqual([false, false, true]);
      expect(results[2].body).toMatchObject({
        allowed: true,
        reason: null,
        code: null,
        policies: [{ name: P.shadow, mode: 'shadow', would_deny: true }],
      });
      // and a shadow policy does not limit the caller, so it names no RateLimit window
      expect(results[2].headers.get('ratelimit-name')).toBeNull();
      expect(results[2].headers.get('ratelimit-policy')).toBeNull();
      expect(results[2].headers.get('retry-after')).toBeNull();
      const m = await sut.metrics();
      expect(metricSum(m, 'tally_policy_decisions_total', wouldDeny)).toBe(counted + 1);
    });
  });

  describe('group fall-through', () => {
    it('counts traffic on the next policy of the group once the first is disabled', async () => {
      // given the first policy of the group claims the traffic
      const selectors = { tenant: tenant(), route: 'tiered' };
      const claimed = await sut.decide<DecisionBody>({ selectors });
      expect(claimed.body.policies.map((p) => p.name)).toEqual([P.first]);

      // when it is disabled and the file reloaded
      await sut.writePolicies(policies({ cappedLimit: 7, firstEnabled: false }));
      expect((await sut.reload()).status).toBe(200);

      // then the next policy of the group counts the same traffic
      const next = await sut.decide<DecisionBody>({ selectors });
      expect(next.status).toBe(200);
      expect(next.body.policies.map((p) => p.name)).toEqual([P.next]);
      expect(next.headers.get('ratelimit-name')).toBe(P.next);
      expect(await sut.remaining(P.next, selectors)).toEqual({ hourly: 49 });
      expect(await sut.remaining(P.first, selectors)).toEqual({ hourly: 99 });
    });
  });
});
