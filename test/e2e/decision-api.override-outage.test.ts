/**
 * The decision API (in this process, real HTTP) on a REAL Redis of its own (a PrivateRedis, stopped by
 * its pid): a key blocked through `PUT /v1/overrides` stays blocked once Redis stops, under
 * local_fallback and fail_open, answered 429 `quota.blocked` degraded as the OpenAPI document says;
 * the copy's size and age are in /metrics.
 */
import { eventually, PrivateRedis, uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DecisionApiModule } from '../../apps/decision-api/src/decision-api.module';
import {
  ADMIN_TOKEN,
  DecisionApiHarness,
  metricSum,
  type DecisionBody,
} from './support/decision-api.harness';

const run = uniqueName('e2e-ov-out');
const P = { local: `${run}-local`, open: `${run}-open` };
const POLL = { timeoutMs: 15_000, intervalMs: 50 } as const;

let server: PrivateRedis;
let sut: DecisionApiHarness;

beforeAll(async () => {
  server = await PrivateRedis.start();
  sut = await DecisionApiHarness.start({
    redisUrl: server.url,
    contract: true,
    policies: `
policies:
  - name: ${P.local}
    match: { route: local }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
    on_backend_failure: local_fallback
  - name: ${P.open}
    match: { route: open }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
    on_backend_failure: fail_open
`,
    env: { TALLY_LOCAL_FALLBACK_SHARE: '1', TALLY_OVERRIDE_CACHE_REFRESH_MS: '100' },
  });
});
afterAll(async () => {
  await sut?.close();
  await server?.stop();
});

describe(DecisionApiModule.name, () => {
  it('keeps refusing a blocked key with 429 quota.blocked once Redis is stopped, under local_fallback and fail_open', async () => {
    // given tenant "abuser" blocked on both policies through the admin API
    for (const policy of [P.local, P.open]) {
      const put = await sut.call('PUT', `/v1/overrides/${policy}/abuser`, {
        token: ADMIN_TOKEN,
        body: { limits: { hourly: 0 }, reason: 'abuse' },
      });
      expect(put.status).toBe(201);
    }
    // and the API's copy holding both
    await eventually(
      () => sut.metrics(),
      (m) => metricSum(m, 'tally_override_cache_entries', {}) === 2,
      POLL,
    );

    // when Redis stops
    await server.stop();
    const ask = (tenant: string, route: string) =>
      sut.decide<DecisionBody>({ selectors: { tenant, route }, cost: 1 });
    await eventually(
      () => ask('someone', 'open'),
      (r) => r.body.degraded,
      POLL,
    );

    // then the blocked tenant is refused, 3 of 3 on local_fallback and on fail_open
    for (const route of ['local', 'local', 'local', 'open']) {
      const res = await ask('abuser', route);
      expect(res.status).toBe(429);
      expect(res.body).toMatchObject({
        allowed: false,
        reason: 'blocked',
        code: 'quota.blocked',
        degraded: true,
        retry_after_ms: 86_400_000,
      });
      expect(res.headers.get('retry-after')).toBe('86400');
    }
    // others pass as their fail modes say
    expect((await ask('someone', 'local')).status).toBe(200);
    expect((await ask('someone', 'open')).status).toBe(200);
    // and the copy's age grows while Redis does not answer
    await eventually(
      () => sut.metrics(),
      (m) => metricSum(m, 'tally_override_cache_age_seconds', {}) > 0.5,
      POLL,
    );
    const metrics = await sut.metrics();
    expect(
      metricSum(metrics, 'tally_local_fallback_decisions_total', { policy: P.local, outcome: 'blocked' }),
    ).toBe(3);
    expect(metricSum(metrics, 'tally_override_cache_skipped', { kind: 'block' })).toBe(0);
  });
});
