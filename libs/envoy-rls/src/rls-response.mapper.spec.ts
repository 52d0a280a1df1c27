import { type Decision, type DecisionBinding } from '@tally/engine';
import { describe, expect, it } from 'vitest';
import { toRlsOutcome, type RlsResponseContext } from './rls-response.mapper';

const WINDOWS: Record<string, { algorithm: 'fixed_window' | 'token_bucket'; periodMs: number }> = {
  'p.minute': { algorithm: 'fixed_window', periodMs: 60_000 },
  'p.burst': { algorithm: 'token_bucket', periodMs: 10_000 },
  'q.hour': { algorithm: 'fixed_window', periodMs: 3_600_000 },
};

/** Headers that name the decision, so a test sees which decision they came from. */
const context: RlsResponseContext = {
  windowOf: (policy, window) => WINDOWS[`${policy}.${window}`],
  headersOf: (d) => ({
    'ratelimit-name': d.binding?.policy ?? '-',
    'ratelimit-remaining': String(d.binding?.remaining ?? '-'),
    ...(d.policies.length > 0 && {
      'ratelimit-policy': d.policies.flatMap((p) => p.windows.map((w) => `"${p.name}.${w.name}"`)).join(', '),
    }),
  }),
};

function decision(
  status: Decision['status'],
  binding: DecisionBinding | null,
  extra: Partial<Decision> = {},
): Decision {
  const allowed = status === 200;
  return {
    allowed,
    decision_id: '01JD0000000000000000000000',
    reason: allowed ? null : status === 429 ? 'sustained_quota_exhausted' : null,
    code: allowed ? null : status === 429 ? 'quota.exceeded' : null,
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
    status,
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
    const sut = toRlsOutcome([decision(200, minute(4))], context);

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
          { key: 'ratelimit-remaining', value: '4' },
          { key: 'ratelimit-policy', value: '"p.minute"' },
        ],
      },
    });
  });

  it('omits current_limit when the period is not one Envoy unit, or the window is gone after a reload', () => {
    const burst: DecisionBinding = { policy: 'p', window: 'burst', limit: 5, remaining: 2, reset_ms: 0 };
    const gone: DecisionBinding = { policy: 'p', window: 'removed', limit: 5, remaining: 1, reset_ms: 999 };

    const sut = toRlsOutcome([decision(200, burst), decision(200, gone)], context);

    expect(sut.kind === 'answer' && sut.response.statuses).toEqual([
      { code: 'OK', limit_remaining: 2, duration_until_reset: { seconds: 0, nanos: 0 } },
      { code: 'OK', limit_remaining: 1, duration_until_reset: { seconds: 0, nanos: 999_000_000 } },
    ]);
  });

  it('answers OK with no limit for a descriptor no policy applies to', () => {
    const sut = toRlsOutcome([decision(200, null)], context);

    expect(sut).toEqual({
      kind: 'answer',
      response: {
        overall_code: 'OK',
        statuses: [{ code: 'OK', limit_remaining: 0 }],
        response_headers_to_add: [
          { key: 'ratelimit-name', value: '-' },
          { key: 'ratelimit-remaining', value: '-' },
        ],
      },
    });
  });

  it('answers OVER_LIMIT when any descriptor is denied, with the headers of the denied one', () => {
    // given the first descriptor allowed with little left and the second denied
    const decisions = [decision(200, hour(1)), decision(429, minute(0), { retry_after_ms: 2000 })];

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
          { key: 'ratelimit-remaining', value: '0' },
          { key: 'ratelimit-policy', value: '"q.hour", "p.minute"' },
        ],
      },
    });
  });

  it('takes the headers of the descriptor with the least left when all are allowed', () => {
    const sut = toRlsOutcome(
      [decision(200, minute(5)), decision(200, hour(2)), decision(200, minute(2))],
      context,
    );

    expect(sut.kind === 'answer' && sut.response.response_headers_to_add).toEqual([
      { key: 'ratelimit-name', value: 'q' },
      { key: 'ratelimit-remaining', value: '2' },
      { key: 'ratelimit-policy', value: '"p.minute", "q.hour"' },
    ]);
  });

  it('answers OK for a degraded (fail_open) decision', () => {
    const sut = toRlsOutcome(
      [decision(200, minute(10), { degraded: true, degraded_cause: 'backend_timeout' })],
      context,
    );

    expect(sut).toMatchObject({
      kind: 'answer',
      response: { overall_code: 'OK', statuses: [{ code: 'OK' }] },
    });
  });

  it.each([400, 409, 413] as const)(
    'is invalid when a descriptor is refused with %i, naming it and its code',
    (status) => {
      const refused = decision(status, null, {
        code: 'selector.identity_missing',
        message: 'tenant is required',
      });

      const sut = toRlsOutcome([decision(429, minute(0)), refused], context);

      expect(sut).toEqual({
        kind: 'invalid',
        message: 'descriptors[1]: selector.identity_missing: tenant is required',
      });
    },
  );

  it('is unavailable when a descriptor fails closed (503), naming the cause', () => {
    const failed = decision(503, null, { code: 'backend.timeout', reason: 'backend_timeout' });

    const sut = toRlsOutcome([decision(200, minute(3)), failed], context);

    expect(sut).toEqual({ kind: 'unavailable', message: 'descriptors[1]: backend.timeout: backend_timeout' });
  });

  it('answers OVER_LIMIT rather than unavailable when one descriptor is denied and another failed', () => {
    const failed = decision(503, null, { code: 'backend.unavailable', reason: 'backend_unavailable' });

    const sut = toRlsOutcome([failed, decision(429, minute(0))], context);

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

    const sut = toRlsOutcome([decision(200, huge)], context);

    expect(sut.kind === 'answer' && sut.response.statuses[0]).toMatchObject({
      current_limit: { requests_per_unit: 0xffff_ffff },
      limit_remaining: 0xffff_ffff,
    });
  });
});
