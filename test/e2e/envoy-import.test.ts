/**
 * Migration from envoyproxy/ratelimit: the realistic multi-domain config of test/fixtures/envoy,
 * converted by `importEnvoyConfig` (what `tally policy import-envoy` prints), served by the real
 * DecisionApiModule and gRPC server on real Redis, answers descriptors as ratelimit documents for
 * that config: N within the limit OK and the N+1st OVER_LIMIT, a descriptor no rule fits OK and
 * uncounted, a shadow rule never denies. Identities are unique per run (counters are per value).
 */
import { readFileSync } from 'node:fs';
import { importEnvoyConfig } from '@tally/ops';
import { uniqueName } from '@tally/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RlsStack, type Answer } from './support/rls-stack.harness';

const run = uniqueName('e2e-import');
const converted = importEnvoyConfig(readFileSync('test/fixtures/envoy/ratelimit-config.yaml', 'utf8'));

type Entries = Record<string, string>;
const MINUTE = 60_000;

describe('tally policy import-envoy (decisions)', () => {
  let sut: RlsStack;
  beforeAll(async () => {
    if (!converted.ok) throw new Error(JSON.stringify(converted.errors));
    sut = await RlsStack.start(inject('redisUrl'), converted.yaml);
  });
  afterAll(async () => {
    await sut?.close();
  });

  const ask = (domain: string, entries: Entries): Promise<Answer> =>
    sut.call({
      domain,
      descriptors: [{ entries: Object.entries(entries).map(([key, value]) => ({ key, value })) }],
    });

  /**
   * `n` calls, each answered; a per-minute limit must not straddle a window boundary (the N+1st would
   * then meet a fresh window), so calls for one start at least 10 s before the minute ends.
   */
  async function codes(domain: string, entries: Entries, n: number, periodMs?: number): Promise<Answer[]> {
    if (periodMs !== undefined) {
      const left = periodMs - (Date.now() % periodMs);
      if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
    }
    const answers: Answer[] = [];
    for (let i = 0; i < n; i++) answers.push(await ask(domain, entries));
    return answers;
  }
  const codesOf = (answers: Answer[]) => answers.map((a) => a.statuses[0].code);

  it.each([
    // domain, descriptor, limit, rule (policy.window), unit, period of the window
    ['edge', { tenant: `${run}-t1` }, 3, 'edge-tenant.minute', 'MINUTE', MINUTE],
    ['edge', { route: 'login', client: `${run}-c1` }, 2, 'edge-route-login-client.hour', 'HOUR', undefined],
    ['edge', { route: `${run}-search` }, 4, 'edge-route.minute', 'MINUTE', MINUTE],
    // a key that is no selector dim keys the counter all the same: one per address
    ['edge', { remote_address: `${run}-203.0.113.7` }, 10, 'edge-remote_address.second', 'SECOND', 1_000],
    ['billing', { plan: 'free', tenant: `${run}-t2` }, 2, 'billing-plan-free-tenant.day', 'DAY', undefined],
    [
      'billing',
      { plan: 'gold', tenant: `${run}-t3` },
      5,
      'billing-plan-gold-tenant.month',
      undefined,
      undefined,
    ],
  ] as const)(
    '%s %j: %i allowed, the next OVER_LIMIT (%s)',
    async (domain, entries, limit, rule, unit, period) => {
      // when
      const answers = await codes(domain, entries, limit + 1, period);
      // then
      expect(codesOf(answers)).toEqual([...Array<string>(limit).fill('OK'), 'OVER_LIMIT']);
      expect(answers[limit].overall_code).toBe('OVER_LIMIT');
      // A 30-day window has no Envoy unit: current_limit is omitted (docs/envoy.md), the rest still reported.
      expect(answers[0].statuses[0].current_limit).toEqual(
        unit === undefined ? undefined : { name: rule, requests_per_unit: limit, unit },
      );
      expect(answers[0].statuses[0].limit_remaining).toBe(limit - 1);
    },
  );

  it.each([
    ['edge', { route: 'health' }], // unlimited: the exact value wins over the key-only rule
    ['edge', { route: 'login' }], // a rule only one level further down
    ['edge', { tenant: `${run}-t4`, route: 'login' }], // an entry more than any rule
    ['edge', { generic_key: 'archive' }], // yearly: reported as not mapped
    ['billing', { plan: 'free' }],
    ['billing', { plan: 'silver', tenant: `${run}-t5` }],
    ['other', { tenant: `${run}-t6` }], // a domain the config does not have
  ] as const)('%s %j: no rule, OK and uncounted', async (domain, entries) => {
    const answers = await codes(domain, entries, 6);
    expect(codesOf(answers)).toEqual(Array<string>(6).fill('OK'));
    // No policy applied: no binding window to report, however many calls (a counted one would be).
    for (const answer of answers) expect(answer.statuses[0].current_limit).toBeUndefined();
  });

  it('a shadow rule counts but never denies', async () => {
    const answers = await codes('edge', { generic_key: 'reports' }, 4);
    expect(codesOf(answers)).toEqual(['OK', 'OK', 'OK', 'OK']);
    // Counted: it reports its window (1 per second), whatever the code.
    expect(answers[0].statuses[0].current_limit).toEqual({
      name: 'edge-generic_key-reports.second',
      requests_per_unit: 1,
      unit: 'SECOND',
    });
  });

  it('departs on a hits_addend above the limit: refused (cost.too_large), not OVER_LIMIT, nothing charged', async () => {
    // ratelimit denies it; Tally refuses a cost that could never pass (docs/semantics.md, "Cost").
    const entries = [
      { key: 'plan', value: 'gold' },
      { key: 'tenant', value: `${run}-t8` },
    ];
    const error = await sut.failure({ domain: 'billing', descriptors: [{ entries }], hits_addend: 6 });
    expect(error.details).toMatch(/^descriptors\[0\]: cost\.too_large: /);
    const after = await sut.call({ domain: 'billing', descriptors: [{ entries }] });
    expect(after.statuses[0].limit_remaining).toBe(4);
  });

  it('checks the descriptors of one request independently, as ratelimit does', async () => {
    const tenant = `${run}-t7`;
    await codes('edge', { tenant }, 3, MINUTE);
    const answer = await sut.call({
      domain: 'edge',
      descriptors: [
        { entries: [{ key: 'tenant', value: tenant }] },
        { entries: [{ key: 'route', value: 'health' }] },
      ],
    });
    expect(answer.overall_code).toBe('OVER_LIMIT');
    expect(answer.statuses.map((s) => s.code)).toEqual(['OVER_LIMIT', 'OK']);
  });
});
