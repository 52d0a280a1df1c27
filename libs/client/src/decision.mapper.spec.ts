import { describe, expect, it } from 'vitest';
import { interpretBatchItem, interpretResponse, unreachableDecision } from './decision.mapper';
import { TallyRequestError } from './tally-request.error';

const ID = '01JD0000000000000000000000';
const policies = [
  {
    name: 'p',
    mode: 'enforce',
    windows: [{ name: 'w', role: 'sustained', limit: 2, remaining: 0, reset_ms: 47000 }],
  },
];
const denied = {
  allowed: false,
  decision_id: ID,
  reason: 'sustained_quota_exhausted',
  code: 'quota.exceeded',
  retry_after_ms: 47000,
  degraded: false,
  replayed: false,
  policies,
};
const headers = {
  'ratelimit-name': 'p',
  'ratelimit-limit': '2',
  'ratelimit-remaining': '0',
  'ratelimit-reset': '47',
  'retry-after': '47',
};

describe(interpretResponse.name, () => {
  it('maps a 429 decision body and its headers to a denial result', () => {
    const sut = interpretResponse(429, headers, denied);

    expect(sut).toEqual({
      kind: 'decision',
      decision: {
        ...denied,
        status: 429,
        rateLimit: {
          binding: { policy: 'p', window: null, limit: 2, remaining: 0, resetSeconds: 47 },
          quotas: [],
          retryAfterSeconds: 47,
        },
        rateLimitHeaders: headers,
      },
    });
  });

  it('keeps degraded_cause and message only when the server sent them', () => {
    const allowed = { ...denied, allowed: true, reason: null, code: null, retry_after_ms: 0 };

    const plain = interpretResponse(200, {}, allowed);
    const degraded = interpretResponse(
      200,
      {},
      { ...allowed, degraded: true, degraded_cause: 'backend_timeout' },
    );

    expect(plain.kind === 'decision' && Object.keys(plain.decision)).not.toContain('degraded_cause');
    expect(plain.kind === 'decision' && Object.keys(plain.decision)).not.toContain('message');
    expect(degraded).toMatchObject({ kind: 'decision', decision: { degraded_cause: 'backend_timeout' } });
  });

  it.each([409, 413, 503])('answers a %i decision body as a result, not an error', (status) => {
    const sut = interpretResponse(status, {}, { ...denied, code: 'x', message: 'why' });

    expect(sut).toMatchObject({ kind: 'decision', decision: { status, allowed: false, message: 'why' } });
  });

  it('turns a 400 decision (unidentifiable caller) into a request error with its reason', () => {
    const body = {
      ...denied,
      reason: 'selector_identity_missing',
      code: 'selector.identity_missing',
      message: 'selector tenant is missing',
    };

    const sut = interpretResponse(400, {}, body);

    expect(sut.kind).toBe('error');
    const error = sut.kind === 'error' ? sut.error : undefined;
    expect(error).toBeInstanceOf(TallyRequestError);
    expect(error).toMatchObject({
      status: 400,
      code: 'selector.identity_missing',
      message: 'selector tenant is missing',
      reason: 'selector_identity_missing',
      errors: [],
    });
  });

  it('turns a validation 400 into a request error with the field errors', () => {
    const errors = [{ path: 'cost', message: 'cost must be a whole number ≥ 0' }];

    const sut = interpretResponse(400, {}, { code: 'request.invalid', message: 'invalid', errors });

    expect(sut).toMatchObject({ kind: 'error', error: { status: 400, code: 'request.invalid', errors } });
  });

  it.each([
    [401, { code: 'auth.missing', message: 'no token' }, 'auth.missing'],
    [413, { code: 'request.too_large', message: 'too large' }, 'request.too_large'],
    [404, 'Not Found', 'http.404'],
  ])('throws-worthy: a %i that is not a decision is the caller’s bug', (status, body, code) => {
    const sut = interpretResponse(status, {}, body);

    expect(sut).toMatchObject({ kind: 'error', error: { status, code } });
  });

  it('treats a 503 without a decision body (overload shedding) as Tally not answering', () => {
    const sut = interpretResponse(
      503,
      { 'retry-after': '1' },
      { code: 'server.overloaded', message: 'busy' },
    );

    expect(sut).toEqual({
      kind: 'failure',
      failure: { kind: 'server_error', message: 'HTTP 503 server.overloaded' },
    });
  });

  it('treats a 2xx that is not a decision as an invalid response', () => {
    const sut = interpretResponse(200, {}, '<html>');

    expect(sut).toMatchObject({ kind: 'failure', failure: { kind: 'invalid_response' } });
  });

  it('answers a 429 without a decision body (a proxy) as a denial using Retry-After', () => {
    const sut = interpretResponse(429, { 'retry-after': '3' }, 'slow down');

    expect(sut).toMatchObject({
      kind: 'decision',
      decision: {
        status: 429,
        allowed: false,
        code: 'quota.exceeded',
        retry_after_ms: 3000,
        decision_id: null,
      },
    });
  });
});

describe(interpretBatchItem.name, () => {
  it('maps an item with its own status to a decision', () => {
    const sut = interpretBatchItem({ status: 429, ...denied });

    expect(sut).toMatchObject({ ok: true, decision: { status: 429, decision_id: ID, rateLimitHeaders: {} } });
  });

  it('maps an invalid item to an error entry', () => {
    const item = { status: 400, allowed: false, code: 'request.invalid', message: 'bad', errors: [] };

    const sut = interpretBatchItem(item);

    expect(sut).toMatchObject({ ok: false, error: { status: 400, code: 'request.invalid' } });
  });
});

describe(unreachableDecision.name, () => {
  const failure = { kind: 'connection', message: 'connect ECONNREFUSED' } as const;

  it('open: allows, degraded with the client_unreachable cause', () => {
    const sut = unreachableDecision('open', failure);

    expect(sut).toEqual({
      status: 200,
      allowed: true,
      decision_id: null,
      reason: null,
      code: null,
      retry_after_ms: 0,
      degraded: true,
      degraded_cause: 'client_unreachable',
      replayed: false,
      policies: [],
      rateLimit: { binding: null, quotas: [], retryAfterSeconds: null },
      rateLimitHeaders: {},
      failure,
    });
  });

  it('closed: refuses like the server’s fail_closed 503, with a Retry-After to relay', () => {
    const sut = unreachableDecision('closed', failure);

    expect(sut).toMatchObject({
      status: 503,
      allowed: false,
      reason: 'backend_unavailable',
      code: 'backend.unavailable',
      retry_after_ms: 1000,
      degraded: false,
      rateLimit: { retryAfterSeconds: 1 },
      rateLimitHeaders: { 'retry-after': '1' },
      failure,
    });
  });
});
