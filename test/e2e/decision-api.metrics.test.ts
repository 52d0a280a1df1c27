/**
 * The decision API's counters against its answers: real HTTP into the real DecisionApiModule, real
 * Redis. Each decision is counted once, as answered (`tally_decisions_total`), whatever number of
 * policies applied to it; each policy apart, with what it said (`tally_policy_decisions_total`: a
 * shadow policy never "denied"). The operator console's Overview, which samples the same /metrics,
 * shows the same numbers.
 */
import { parseExposition, SampleRing } from '@tally/observability';
import { uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  byOutcome,
  byPolicy,
  DECISIONS,
  deniedByReason,
  POLICY_DECISIONS,
} from '../../apps/projector/src/console/overview-series';
import { DecisionApiHarness, metricSum } from './support/decision-api.harness';

const run = uniqueName('e2e-metrics');
const P = { cap: `${run}-cap`, wide: `${run}-wide`, watch: `${run}-watch` };
/** Three policies on one route: 3 per tenant, 1000 per tenant, and a shadow policy of 1 per tenant. */
const POLICIES = `
policies:
  - name: ${P.cap}
    match: { route: metered }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 3, period: 1h }
  - name: ${P.wide}
    match: { route: metered }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1000, period: 1h }
  - name: ${P.watch}
    match: { route: metered }
    key: [tenant]
    mode: shadow
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1, period: 1h }
`;

let sut: DecisionApiHarness;

beforeAll(async () => {
  sut = await DecisionApiHarness.start({ redisUrl: inject('redisUrl'), policies: POLICIES });
});
afterAll(async () => {
  await sut.close();
});

/** The counts of one counter by the given labels, as `metricSum` reads them. */
const count = (text: string, name: string, labels: Record<string, string>) => metricSum(text, name, labels);

describe('decision API metrics', () => {
  it('counts N 429s as N denials, and each policy with what it said', async () => {
    // given what /metrics says before
    const before = await sut.metrics();
    const tenant = uniqueName('acme');
    const selectors = { tenant, route: 'metered' };
    const statuses: number[] = [];

    // when 3 decisions are allowed, then 8 are denied one by one and 3 more in one batch
    for (let i = 0; i < 11; i++) statuses.push((await sut.decide({ selectors })).status);
    const batch = await sut.call<{ results: { status: number }[] }>('POST', '/v1/decisions:batch', {
      body: { requests: [{ selectors }, { selectors }, { selectors }] },
    });
    statuses.push(...batch.body.results.map((r) => r.status));
    const after = await sut.metrics();

    // then the answers were 3 × 200 and 11 × 429
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(11);
    // and /metrics counts each decision once: 11 denials, 3 allowed, 14 decisions in all
    const delta = (labels: Record<string, string>) =>
      count(after, DECISIONS, labels) - count(before, DECISIONS, labels);
    expect(delta({ outcome: 'denied' })).toBe(11);
    expect(delta({ outcome: 'denied', reason: 'sustained_quota_exhausted' })).toBe(11);
    expect(delta({ outcome: 'allowed' })).toBe(3);
    expect(delta({})).toBe(14);
    // and each policy with its own outcome: cap denied the 11, wide let them through to no avail,
    // the shadow policy admitted the first and would have denied the other 13, never "denied"
    const policy = (name: string, outcome: string) =>
      count(after, POLICY_DECISIONS, { policy: name, outcome });
    expect([policy(P.cap, 'allowed'), policy(P.cap, 'denied'), policy(P.cap, 'denied_by_other')]).toEqual([
      3, 11, 0,
    ]);
    expect([policy(P.wide, 'allowed'), policy(P.wide, 'denied'), policy(P.wide, 'denied_by_other')]).toEqual([
      3, 0, 11,
    ]);
    expect([policy(P.watch, 'allowed'), policy(P.watch, 'would_deny'), policy(P.watch, 'denied')]).toEqual([
      1, 13, 0,
    ]);
    expect(count(after, POLICY_DECISIONS, { policy: P.watch, mode: 'shadow' })).toBe(14);
    expect(count(after, POLICY_DECISIONS, { policy: P.cap, mode: 'enforce' })).toBe(14);

    // and the console's Overview, sampling the same /metrics, shows 11 denials over the interval
    const names = new Set([DECISIONS, POLICY_DECISIONS]);
    const ring = new SampleRing(2);
    ring.push({ atMs: 0, series: parseExposition(before, names) });
    ring.push({ atMs: 1000, series: parseExposition(after, names) });
    const perSecond = (series: { label: string; points: readonly (readonly [number, number])[] }[]) =>
      Object.fromEntries(series.map((s) => [s.label, s.points[0][1]]));
    expect(perSecond(ring.rates(deniedByReason))).toEqual({ sustained_quota_exhausted: 11 });
    expect(perSecond(ring.rates(byOutcome))).toMatchObject({ allowed: 3, denied: 11 });
    expect(perSecond(ring.rates(byPolicy))).toMatchObject({
      [`denied · ${P.cap}`]: 11,
      [`denied_by_other · ${P.wide}`]: 11,
      [`would_deny · ${P.watch}`]: 13,
      [`allowed · ${P.watch}`]: 1,
    });
    expect(perSecond(ring.rates(byPolicy))).not.toHaveProperty(`denied · ${P.watch}`);
  });

  it('counts a request no policy applies to once, as allowed and unmatched', async () => {
    const before = await sut.metrics();

    const res = await sut.decide({ selectors: { tenant: uniqueName('acme'), route: 'elsewhere' } });

    expect(res.status).toBe(200);
    const after = await sut.metrics();
    const delta = (labels: Record<string, string>) =>
      count(after, DECISIONS, labels) - count(before, DECISIONS, labels);
    expect(delta({ outcome: 'allowed', reason: 'unmatched' })).toBe(1);
    expect(delta({})).toBe(1);
  });
});
