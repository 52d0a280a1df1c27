import { type Decision, type DecisionBinding } from '@tally/engine';
import { describe, expect, it } from 'vitest';
import { toRlsOutcome, type RlsResponseContext } from './rls-response.mapper';

const WINDOWS: Record<string, { algorithm: 'fixed_window' | 'token_bucket'; periodMs: number }> = {
  'p.minute': { algorithm: 'fixed_window', periodMs: 60_000 },
  'p.burst': { algorithm: 'token_bucket', periodMs: 10_000 },
  'q.hour': { algorithm: 'fixed_window', periodMs: 3_600_000 },
  'trial.hour': { algorithm: 'fixed_window', periodMs: 3_600_000 },
};

const context: RlsResponseContext = {
  windowOf: (policy, window) => WINDOWS[`${policy}.${window}`],
};

function decision(
  kind: Decision['kind'],
  binding: DecisionBinding | null,
  extra: Partial<Decision> = {},
): Decision {
  const allowed = kind === 'allowed';
  return {
    allowed,
    decision_id: '01JD0000000000000000000000',
    reason: allowed ? null : kind === 'denied' ? 'sustained_quota_exhausted' : null,
    code: allowed ? null : kind === 'denied' ? 'quota.exceeded' : null,
    retry_after_ms: 0,
    degraded: false,
    replayed: false,
    policies: binding
      ? [
          {
            name: binding.policy,
            mode: 'enforce',
            windows: [{ name: binding.window, role: 'sustained', ...binding }],
          },
        ]
      : [],
    kind,
    binding,
    ...extra,
  };
}

const minute = (remaining: number, reset_ms = 30_250): DecisionBinding => ({
  policy: 'p',
  window: 'minute',
  limit: 10,
  remaining,
  reset_ms,
});
const hour = (remaining: number): DecisionBinding => ({
  policy: 'q',
  window: 'hour',
  limit: 100,
  remaining,
  reset_ms: 1000,
});

describe(toRlsOutcome.name, () => {
  it('answers OK with the binding window as limit, remaining and time to reset', () => {
    const sut = toRlsOutcome([decision('allowed', minute(4))], context);

    expect(sut).toEqual({
      kind: 'answer',
      response: {
        overall_code: 'OK',
        statuses: [
          {
            code: 'OK',
            current_limit: { name: 'p.minute', requests_per_unit: 10, unit: 'MINUTE' },
            limit_remaining: 4,
            duration_until_reset: { seconds: 30, nanos: 250_000_000 },
          },
        ],
        response_headers_to_add: [
          { key: 'ratelimit-name', value: 'p' },
          { key: 'ratelimit-limit', value: '10' },
          { key: 'ratelimit-remaining', value: '4' },
          { key: 'ratelimit-reset', value: '31' },
          { key: 'ratelimit', value: '"p.minute";r=4;t=31' },
          { key: 'ratelimit-policy', value: '"p.minute";q=10' },
        ],
      },
    });
  });

  it('answers a descriptor no rule fits (null) OK without a limit, beside the decided ones', () => {
    const sut = toRlsOutcome([null, decision('denied', minute(0))], context);

    expect(sut.kind === 'answer' && sut.response.overall_code).toBe('OVER_LIMIT');
    expect(sut.kind === 'answer' && sut.response.statuses[0]).toEqual({ code: 'OK', limit_remaining: 0 });
    expect(sut.kind === 'answer' && sut.response.statuses[1].code).toBe('OVER_LIMIT');
  });

  it('reports the tightest shadow window of a descriptor only shadow policies count, still OK', () => {
    const shadowOnly = decision('allowed', null, {
      policies: [
        {
          name: 'trial',
          mode: 'shadow',
          would_deny: true,
          windows: [
            { name: 'minute', role: 'sustained', limit: 10, remaining: 3, reset_ms: 1000 },
            { name: 'hour', role: 'sustained', limit: 100, remaining: 0, reset_ms: 2000 },
          ],
        },
      ],
    });

    const sut = toRlsOutcome([shadowOnly], context);

    expect(sut.kind === 'answer' && sut.response.statuses).toEqual([
      {
        code: 'OK',
        current_limit: { name: 'trial.hour', requests_per_unit: 100, unit: 'HOUR' },
        limit_remaining: 0,
        duration_until_reset: { seconds: 2, nanos: 0 },
      },
    ]);
    expect(sut.kind === 'answer' && sut.response.response_headers_to_add).toEqual([]);
  });

  it("repeats limit, remaining and reset under envoyproxy/ratelimit's x-ratelimit-* names when asked to", () => {
    const on = toRlsOutcome([decision('allowed', minute(4))], { ...context, xRateLimitHeaders: true });
    const off = toRlsOutcome([decision('allowed', minute(4))], context);

    const peer = (outcome: typeof on) =>
      outcome.kind === 'answer'
        ? outcome.response.response_headers_to_add.filter((h) => h.key.startsWith('x-'))
        : null;
    expect(peer(on)).toEqual([
      { key: 'x-ratelimit-limit', value: '10' },
      { key: 'x-ratelimit-remaining', value: '4' },
      { key: 'x-ratelimit-reset', value: '31' },
    ]);
    expect(peer(off)).toEqual([]);
  });

  it('omits current_limit when the period is not one Envoy unit, or the window is gone after a reload', () => {
    const burst: DecisionBinding = { policy: 'p', window: 'burst', limit: 5, remaining: 2, reset_ms: 0 };
    const gone: DecisionBinding = { policy: 'p', window: 'removed', limit: 5, remaining: 1, reset_ms: 999 };

    const sut = toRlsOutcome([decision('allowed', burst), decision('allowed', gone)], context);

    expect(sut.kind === 'answer' && sut.response.statuses).toEqual([
      { code: 'OK', limit_remaining: 2, duration_until_reset: { seconds: 0, nanos: 0 } },
      { code: 'OK', limit_remaining: 1, duration_until_reset: { seconds: 0, nanos: 999_000_000 } },
    ]);
  });

  it('answers OK with no limit for a descriptor no policy applies to', () => {
    const sut = toRlsOutcome([decision('allowed', null)], context);

    expect(sut).toEqual({
      kind: 'answer',
      response: {
        overall_code: 'OK',
        statuses: [{ code: 'OK', limit_remaining: 0 }],
        response_headers_to_add: [],
      },
    });
  });

  it('answers OVER_LIMIT when any descriptor is denied, with the headers of the denied one', () => {
    // given the first descriptor allowed with little left and the second denied
    const decisions = [decision('allowed', hour(1)), decision('denied', minute(0), { retry_after_ms: 2000 })];

    const sut = toRlsOutcome(decisions, context);

    expect(sut).toEqual({
      kind: 'answer',
      response: {
        overall_code: 'OVER_LIMIT',
        statuses: [
          {
            code: 'OK',
            current_limit: { name: 'q.hour', requests_per_unit: 100, unit: 'HOUR' },
            limit_remaining: 1,
            duration_until_reset: { seconds: 1, nanos: 0 },
          },
          {
            code: 'OVER_LIMIT',
            current_limit: { name: 'p.minute', requests_per_unit: 10, unit: 'MINUTE' },
            limit_remaining: 0,
            duration_until_reset: { seconds: 30, nanos: 250_000_000 },
          },
        ],
        response_headers_to_add: [
          { key: 'ratelimit-name', value: 'p' },
          { key: 'ratelimit-limit', value: '10' },
          { key: 'ratelimit-remaining', value: '0' },
          { key: 'ratelimit-reset', value: '31' },
          { key: 'ratelimit', value: '"p.minute";r=0;t=31' },
          { key: 'ratelimit-policy', value: '"q.hour";q=100, "p.minute";q=10' },
          { key: 'retry-after', value: '2' },
        ],
      },
    });
  });

  it('takes the headers of the descriptor with the least left when all are allowed', () => {
    const sut = toRlsOutcome(
      [decision('allowed', minute(5)), decision('allowed', hour(2)), decision('allowed', minute(2))],
      context,
    );

    expect(sut.kind === 'answer' && sut.response.response_headers_to_add).toEqual([
      { key: 'ratelimit-name', value: 'q' },
      { key: 'ratelimit-limit', value: '100' },
      { key: 'ratelimit-remaining', value: '2' },
      { key: 'ratelimit-reset', value: '1' },
      { key: 'ratelimit', value: '"q.hour";r=2;t=1' },
      { key: 'ratelimit-policy', value: '"p.minute";q=10, "q.hour";q=100' },
    ]);
  });

  it('answers OK for a degraded (fail_open) decision', () => {
    const sut = toRlsOutcome(
      [decision('allowed', minute(10), { degraded: true, degraded_cause: 'backend_timeout' })],
      context,
    );

    expect(sut).toMatchObject({
      kind: 'answer',
      response: { overall_code: 'OK', statuses: [{ code: 'OK' }] },
    });
  });

  it('answers OVER_LIMIT for a degraded denial (a local_fallback policy over its share while Redis fails)', () => {
    const sut = toRlsOutcome(
      [decision('denied', minute(0), { degraded: true, degraded_cause: 'backend_unavailable' })],
      context,
    );

    expect(sut).toMatchObject({
      kind: 'answer',
      response: { overall_code: 'OVER_LIMIT', statuses: [{ code: 'OVER_LIMIT' }] },
    });
  });

  it.each(['invalid', 'conflict', 'too_large'] as const)(
    'is invalid when a descriptor is refused as %s, naming it and its code',
    (kind) => {
      const refused = decision(kind, null, {
        code: 'selector.identity_missing',
        message: 'tenant is required',
      });

      const sut = toRlsOutcome([decision('denied', minute(0)), refused], context);

      expect(sut).toEqual({
        kind: 'invalid',
        message: 'descriptors[1]: selector.identity_missing: tenant is required',
      });
    },
  );

  it('is unavailable when a descriptor fails closed, naming the cause', () => {
    const failed = decision('unavailable', null, { code: 'backend.timeout', reason: 'backend_timeout' });

    const sut = toRlsOutcome([decision('allowed', minute(3)), failed], context);

    expect(sut).toEqual({ kind: 'unavailable', message: 'descriptors[1]: backend.timeout: backend_timeout' });
  });

  it('answers OVER_LIMIT rather than unavailable when one descriptor is denied and another failed', () => {
    const failed = decision('unavailable', null, {
      code: 'backend.unavailable',
      reason: 'backend_unavailable',
    });

    const sut = toRlsOutcome([failed, decision('denied', minute(0))], context);

    expect(sut).toMatchObject({
      kind: 'answer',
      response: { overall_code: 'OVER_LIMIT', statuses: [{ code: 'UNKNOWN' }, { code: 'OVER_LIMIT' }] },
    });
  });

  it('caps numbers at uint32', () => {
    const huge: DecisionBinding = {
      policy: 'p',
      window: 'minute',
      limit: 2 ** 40,
      remaining: 2 ** 33,
      reset_ms: 1,
    };

    const sut = toRlsOutcome([decision('allowed', huge)], context);

    expect(sut.kind === 'answer' && sut.response.statuses[0]).toMatchObject({
      current_limit: { requests_per_unit: 0xffff_ffff },
      limit_remaining: 0xffff_ffff,
    });
  });

  it('saturates uint32 fields at 2^53 − 1 and keeps the exact numbers in the headers', () => {
    // given the largest limit Tally accepts, one unit spent
    const largest: DecisionBinding = {
      policy: 'p',
      window: 'minute',
      limit: Number.MAX_SAFE_INTEGER,
      remaining: Number.MAX_SAFE_INTEGER - 1,
      reset_ms: 1,
    };

    const sut = toRlsOutcome([decision('allowed', largest)], context);

    // then the uint32 fields say "at least 4,294,967,295" and the headers carry the exact values
    if (sut.kind !== 'answer') throw new Error(sut.kind);
    expect(sut.response.statuses[0]).toMatchObject({
      current_limit: { requests_per_unit: 0xffff_ffff },
      limit_remaining: 0xffff_ffff,
    });
    const headers = Object.fromEntries(sut.response.response_headers_to_add.map((h) => [h.key, h.value]));
    expect(headers).toMatchObject({
      'ratelimit-limit': '9007199254740991',
      'ratelimit-remaining': '9007199254740990',
    });
  });
});
