import type { Policy, PolicySet, WindowSpec } from '@tally/policy';
import { describe, expect, it } from 'vitest';
import { PAYLOAD_PREFIX } from '@tally/events';
import { maxCostOf, planDecision, type PlanContext } from './decision-plan';
import { testPolicy } from '@tally/testing';

const SECRET = 'unit-test-secret-0123456789';

function policy(name: string, over: Partial<Policy> = {}): Policy {
  const windows: WindowSpec[] = [
    { name: 'burst', role: 'burst', algorithm: 'token_bucket', limit: 10, periodMs: 1_000 },
    { name: 'sustained', role: 'sustained', algorithm: 'fixed_window', limit: 100, periodMs: 60_000 },
  ];
  return testPolicy(name, { windows, ...over });
}

/** A small ceiling, so its cases read plainly; the production default is `DEFAULT_MAX_COST`. */
const CEILING = 1000;

function context(...policies: Policy[]): PlanContext {
  const policySet: PolicySet = { version: 'v-test', policies, loadedAt: 0 };
  return {
    policySet,
    tokenSecret: SECRET,
    shards: 64,
    maxCost: CEILING,
    decisionId: '01JDTESTDECISION0000000000',
  };
}

describe(planDecision.name, () => {
  it('plans every window of every applicable policy with exact keys, tags and payload', () => {
    const ctx = context(
      policy('api'),
      policy('trial', { mode: 'shadow', key: ['tenant'], onBackendFailure: 'fail_closed' }),
    );
    const sut = planDecision(
      { selectors: { tenant: 'acme', principal: ' svc-42 ' }, cost: 3, idempotency_key: 'b-77' },
      ctx,
    );
    if (!sut.ok) throw new Error(sut.refusal.message);
    const { plan } = sut;
    // the rate windows of one policy key share its state hash
    expect(plan.windows.map((w) => [w.redisKey, w.mode, w.denialTag])).toEqual([
      ['tally:v1:{s47}:pk:api:acme:svc-42', 0, 'api|svc-42|burst_quota_exhausted'],
      ['tally:v1:{s47}:pk:api:acme:svc-42', 0, 'api|svc-42|sustained_quota_exhausted'],
      ['tally:v1:{s47}:pk:trial:acme:acme', 1, 'trial|acme|burst_quota_exhausted'],
      ['tally:v1:{s47}:pk:trial:acme:acme', 1, 'trial|acme|sustained_quota_exhausted'],
    ]);
    expect(plan.idempotencyRedisKey).toBe(
      'tally:v1:{s47}:idem.sha256:acme:8qzNu1aDjPoR7IjBwOyWsGGwIDtCJ4m2U4mXZ6ze4kQ',
    );
    expect(plan.failClosed).toBe(true);
    expect(plan.payloadJson.startsWith(PAYLOAD_PREFIX)).toBe(true);
    expect(JSON.parse(plan.payloadJson)).toEqual({
      v: 1,
      outcome: 'allowed',
      id: '01JDTESTDECISION0000000000',
      policy_set_version: 'v-test',
      tenant: 'acme',
      selectors: { tenant: 'acme', principal: 'svc-42' },
      attributes: {},
      cost: 3,
      idempotency_key: 'b-77',
      policies: [
        {
          name: 'api',
          mode: 'enforce',
          key: 'svc-42',
          windows: [
            { name: 'burst', role: 'burst', limit: 10 },
            { name: 'sustained', role: 'sustained', limit: 100 },
          ],
        },
        {
          name: 'trial',
          mode: 'shadow',
          key: 'acme',
          windows: [
            { name: 'burst', role: 'burst', limit: 10 },
            { name: 'sustained', role: 'sustained', limit: 100 },
          ],
        },
      ],
    });
  });

  it('fingerprints normalized values, so whitespace and attribute order do not matter', () => {
    const ctx = context(policy('api'));
    const idempotency_key = 'k';
    const a = planDecision(
      { selectors: { principal: 'p' }, attributes: { b: '1', a: '2' }, cost: 1, idempotency_key },
      ctx,
    );
    const b = planDecision(
      { selectors: { principal: ' p ' }, attributes: { a: '2', b: '1' }, cost: 1, idempotency_key },
      ctx,
    );
    const c = planDecision(
      { selectors: { principal: 'p' }, attributes: { a: '2', b: '1' }, cost: 2, idempotency_key },
      ctx,
    );
    if (!a.ok || !b.ok || !c.ok) throw new Error('unexpected refusal');
    expect(a.plan.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(a.plan.fingerprint).toBe(b.plan.fingerprint);
    expect(a.plan.fingerprint).not.toBe(c.plan.fingerprint);
  });

  it.each([
    ['no idempotency key', { selectors: { principal: 'p' }, cost: 1 }],
    ['a peek with an idempotency key', { selectors: { principal: 'p' }, cost: 0, idempotency_key: 'k' }],
  ])('skips the fingerprint when no idempotency record is kept: %s', (_name, request) => {
    const sut = planDecision(request, context(policy('api')));
    if (!sut.ok) throw new Error(sut.refusal.message);

    expect(sut.plan.idempotencyRedisKey).toBeUndefined();
    expect(sut.plan.fingerprint).toBe('');
  });

  it('never puts a raw token into a key or the payload', () => {
    const sut = planDecision(
      { selectors: { token: 'sk-secret-value' }, cost: 1 },
      context(policy('api', { key: ['token'] })),
    );
    if (!sut.ok) throw new Error(sut.refusal.message);
    expect(sut.plan.windows[0].redisKey).toMatch(/^tally:v1:\{s46\}:pk:api:_:t_/);
    expect(JSON.stringify(sut.plan)).not.toContain('sk-secret-value');
  });

  it('skips the idempotency record for a peek', () => {
    const sut = planDecision(
      { selectors: { principal: 'p' }, cost: 0, idempotency_key: 'k' },
      context(policy('api')),
    );
    expect(sut.ok && sut.plan.idempotencyRedisKey).toBeUndefined();
  });

  it.each([
    [
      { selectors: { principal: 'a\u0007b' }, cost: 1 },
      'invalid',
      'selector.identity_invalid',
      'selector_identity_invalid',
    ],
    [
      { selectors: { principal: 'p' }, attributes: [], cost: 1 },
      'invalid',
      'selector.identity_invalid',
      'selector_identity_invalid',
    ],
    [
      { selectors: { tenant: 'acme' }, cost: 1 },
      'invalid',
      'selector.identity_missing',
      'selector_identity_missing',
    ],
    [{ selectors: { principal: 'p' }, cost: -1 }, 'invalid', 'cost.invalid', null],
    [{ selectors: { principal: 'p' }, cost: 1.5 }, 'invalid', 'cost.invalid', null],
    [{ selectors: { principal: 'p' }, cost: '1' }, 'invalid', 'cost.invalid', null],
    [{ selectors: { principal: 'p' }, cost: 11 }, 'too_large', 'cost.too_large', null],
    [
      { selectors: { principal: 'p' }, cost: 1, idempotency_key: 7 },
      'invalid',
      'idempotency_key.invalid',
      null,
    ],
    // selectors are checked before cost: a bad identity is reported even with a bad cost
    [
      { selectors: { tenant: 'acme' }, cost: -5 },
      'invalid',
      'selector.identity_missing',
      'selector_identity_missing',
    ],
  ])('refuses %j as %s %s', (request, kind, code, reason) => {
    const sut = planDecision(request, context(policy('api')));
    expect(sut.ok).toBe(false);
    if (!sut.ok) expect(sut.refusal).toMatchObject({ kind, code, reason });
  });

  it('keys by an attribute (an Envoy descriptor entry), and names a missing one as an attribute', () => {
    // given: a policy counting per remote_address, as import-envoy writes a key-only descriptor rule
    const ctx = context(policy('addr', { key: ['remote_address'] }));
    // when
    const sut = planDecision({ selectors: {}, attributes: { remote_address: '10.0.0.1' }, cost: 1 }, ctx);
    const missing = planDecision({ selectors: {}, attributes: {}, cost: 1 }, ctx);
    // then
    expect(sut.ok ? sut.plan.policies.map((p) => p.key) : sut.refusal.message).toEqual(['10.0.0.1']);
    expect(missing.ok ? null : missing.refusal).toMatchObject({
      code: 'selector.identity_missing',
      message: 'attributes.remote_address is required by policy addr',
    });
  });

  it('skips a shadow policy whose key dims are missing, and still fails closed for an enforced one', () => {
    // given: a shadow trial keyed by client in front of an enforced policy keyed by principal
    const ctx = context(policy('trial', { mode: 'shadow', key: ['client'] }), policy('api'));
    // when: the request carries no client
    const sut = planDecision({ selectors: { principal: 'p' }, cost: 1 }, ctx);
    // then: only the enforced policy is planned; the trial never changes the outcome
    if (!sut.ok) throw new Error(sut.refusal.message);
    expect(sut.plan.policies.map((p) => p.policy.name)).toEqual(['api']);
    const enforced = planDecision({ selectors: { client: 'c' }, cost: 1 }, ctx);
    expect(enforced.ok ? null : enforced.refusal.code).toBe('selector.identity_missing');
  });

  const PRINTABLE = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('');

  it.each([
    ['one character', 'k'],
    ['255 characters', 'k'.repeat(255)],
    ['every printable ASCII character', PRINTABLE],
    ['a UUID', '0b6f3a5e-8d4c-4f1a-9b2e-7c1d3e5f7a9b'],
  ])('accepts an idempotency key of %s', (_case, idempotency_key) => {
    const sut = planDecision(
      { selectors: { principal: 'p' }, cost: 1, idempotency_key },
      context(policy('api')),
    );

    expect(sut.ok).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space', 'a b'],
    ['a tab', 'a\tb'],
    ['a newline', 'a\nb'],
    ['NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['a C1 control', 'a\u0085b'],
    ['a lone high surrogate', 'a\ud800'],
    ['a lone low surrogate', '\udc00a'],
    ['a non-ASCII letter', 'clé'],
    ['an emoji (a valid surrogate pair)', 'k\u{1f600}'],
    ['a number', 7],
    ['null', null],
  ])(
    'refuses an idempotency key that is %s with 400 idempotency_key.invalid, naming the rule',
    (_case, key) => {
      const sut = planDecision(
        { selectors: { principal: 'p' }, cost: 1, idempotency_key: key },
        context(policy('api')),
      );

      expect(sut).toEqual({
        ok: false,
        refusal: {
          kind: 'invalid',
          code: 'idempotency_key.invalid',
          reason: null,
          message:
            'idempotency_key must be 1..255 printable ASCII characters (0x21-0x7E: letters, digits, punctuation; no spaces or control characters)',
        },
      });
    },
  );

  it('gives two keys that differ only by a character a lone surrogate would replace two different records', () => {
    // Before the alphabet rule, "a\ud800" and "a\ud801" were both stored under "a\ufffd": a second
    // request with other content got 409. They are refused now; printable neighbours stay apart.
    const plan = (idempotency_key: string) => {
      const sut = planDecision(
        { selectors: { principal: 'p' }, cost: 1, idempotency_key },
        context(policy('api')),
      );
      if (!sut.ok) throw new Error(sut.refusal.message);
      return sut.plan.idempotencyRedisKey;
    };

    expect(plan('a!')).not.toBe(plan('a"'));
  });
});

describe(maxCostOf.name, () => {
  const of = (...policies: Policy[]) => policies.map((p) => ({ policy: p }));

  it('is the smallest enforce max_cost, capped by enforce window limits', () => {
    expect(maxCostOf(of(policy('a', { maxCost: 50 })), CEILING)).toBe(10);
    expect(maxCostOf(of(policy('a', { maxCost: 5 })), CEILING)).toBe(5);
  });

  it('is never bounded by a shadow policy: a trial must not turn a cost into a 413', () => {
    // given a shadow trial whose max_cost (explicit, or its smallest window by default) is below the cost
    expect(maxCostOf(of(policy('a', { maxCost: 5, mode: 'shadow' })), CEILING)).toBe(CEILING);
    expect(
      maxCostOf(of(policy('a', { maxCost: 5, mode: 'shadow' }), policy('b', { maxCost: 8 })), CEILING),
    ).toBe(8);
  });

  it('is never above the global ceiling, and is the ceiling when no policy applies', () => {
    expect(maxCostOf([], CEILING)).toBe(CEILING);
    expect(maxCostOf(of(policy('a', { maxCost: 5000, mode: 'shadow' })), CEILING)).toBe(CEILING);
  });
});

describe('the global cost ceiling (TALLY_MAX_COST)', () => {
  it.each([
    ['an unmatched decision', [] as Policy[]],
    ['a shadow policy with a larger max_cost', [policy('trial', { maxCost: 5000, mode: 'shadow' })]],
  ])('refuses a cost above it with 413 for %s, and takes one at it', (_case, policies) => {
    const ctx = context(...policies);
    const above = planDecision({ selectors: { principal: 'p' }, cost: CEILING + 1 }, ctx);
    expect(above.ok ? null : above.refusal).toEqual({
      kind: 'too_large',
      code: 'cost.too_large',
      reason: null,
      message: `cost must be at most ${CEILING} (the global ceiling, TALLY_MAX_COST)`,
    });
    expect(planDecision({ selectors: { principal: 'p' }, cost: CEILING }, ctx).ok).toBe(true);
  });

  it('refuses a cost past 2^53 − 1 as invalid: it is not the number the caller sent', () => {
    const sut = planDecision({ selectors: { principal: 'p' }, cost: 2 ** 53 }, context());
    expect(sut.ok ? null : sut.refusal.code).toBe('cost.invalid');
  });
});

describe('Envoy RLS requests (wholeDescriptor, windowOverride)', () => {
  const override: WindowSpec = {
    name: 'envoy_override_hour',
    role: 'sustained',
    algorithm: 'fixed_window',
    limit: 50,
    periodMs: 3_600_000,
  };

  it('plans only the policies that fit the whole request when asked to', () => {
    const ctx = context(policy('api', { key: ['tenant'] }));
    const request = { selectors: { tenant: 'acme', principal: 'p' }, cost: 1 };

    const subset = planDecision(request, ctx);
    const whole = planDecision({ ...request, wholeDescriptor: true }, ctx);

    expect(subset.ok && subset.plan.policies.map((p) => p.policy.name)).toEqual(['api']);
    expect(whole.ok && whole.plan.policies).toEqual([]);
  });

  it("replaces every applicable policy's windows with the override, which also bounds the cost", () => {
    const ctx = context(
      policy('api', { key: ['tenant'] }),
      policy('trial', { key: ['tenant'], mode: 'shadow' }),
    );
    const request = { selectors: { tenant: 'acme' }, cost: 50, windowOverride: override };

    const sut = planDecision(request, ctx);
    const above = planDecision({ ...request, cost: 51 }, ctx);

    if (!sut.ok) throw new Error(sut.refusal.message);
    expect(
      sut.plan.windows.map((w) => [w.policy.name, w.name, w.limit, w.periodMs, w.redisKey, w.mode]),
    ).toEqual([
      ['api', 'envoy_override_hour', 50, 3_600_000, 'tally:v1:{s47}:pk:api:acme:acme', 0],
      ['trial', 'envoy_override_hour', 50, 3_600_000, 'tally:v1:{s47}:pk:trial:acme:acme', 1],
    ]);
    expect(above.ok ? null : above.refusal.code).toBe('cost.too_large');
  });

  it('leaves an unmatched request unmatched: an override adds no policy', () => {
    const sut = planDecision(
      { selectors: { tenant: 'acme' }, cost: 1, windowOverride: override, wholeDescriptor: true },
      context(policy('api', { key: ['tenant', 'principal'] })),
    );

    expect(sut.ok && sut.plan.windows).toEqual([]);
  });
});
