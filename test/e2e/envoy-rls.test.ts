/**
 * Envoy's rate-limit gRPC API end to end: the real DecisionApiModule on Fastify with its gRPC server on
 * an ephemeral port, a @grpc/grpc-js client built from the same vendored protos, real Redis (and an
 * unreachable one for backend failures). Only the process boundary and Envoy itself are missing.
 */
import { status } from '@grpc/grpc-js';
import { type RlsRequest } from '@tally/envoy-rls';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { GrpcRlsServer } from '../../apps/decision-api/src/grpc-rls.server';
import { RlsStack, type Answer } from './support/rls-stack.harness';

const headers = (answer: Answer): Record<string, string> =>
  Object.fromEntries((answer.response_headers_to_add ?? []).map((h) => [h.key, h.value]));
const remaining = (answer: Answer): number[] => answer.statuses.map((s) => s.limit_remaining ?? 0);

const run = uniqueName('e2e-rls');
const DOMAIN = `${run}-edge`;
const P = { api: `${run}-api`, hits: `${run}-hits`, odd: `${run}-odd` };
const POLICIES = `
policies:
  - name: ${P.api}
    match: { domain: ${DOMAIN}, route: api }
    key: [tenant, principal]
    windows:
      - { name: minute, role: sustained, algorithm: fixed_window, limit: 3, period: 1m }
    on_backend_failure: fail_closed
  - name: ${P.hits}
    match: { domain: ${DOMAIN}, route: hits }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }
  - name: ${P.odd}
    match: { domain: ${DOMAIN}, route: odd }
    key: [tenant]
    windows:
      - { name: ten_seconds, role: burst, algorithm: token_bucket, limit: 5, period: 10s }
`;

const api = (tenant: string, principal = 'svc-42'): RlsRequest => ({
  domain: DOMAIN,
  descriptors: [
    {
      entries: [
        { key: 'tenant', value: tenant },
        { key: 'principal', value: principal },
        { key: 'route', value: 'api' },
      ],
    },
  ],
});
const hits = (tenant: string, extra: Partial<RlsRequest> = {}, own?: number): RlsRequest => ({
  domain: DOMAIN,
  descriptors: [
    {
      entries: [
        { key: 'tenant', value: tenant },
        { key: 'route', value: 'hits' },
      ],
      ...(own !== undefined && { hits_addend: { value: own } }),
    },
  ],
  ...extra,
});

describe(GrpcRlsServer.name, () => {
  let sut: RlsStack;

  beforeAll(async () => {
    sut = await RlsStack.start(inject('redisUrl'), POLICIES);
  });
  afterAll(async () => {
    await sut?.close();
  });

  it('answers OK up to the limit, then OVER_LIMIT, with exact statuses and the HTTP API headers', async () => {
    const request = api(uniqueName('acme'));

    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await sut.call(request));

    expect(answers.map((a) => a.overall_code)).toEqual(['OK', 'OK', 'OK', 'OVER_LIMIT']);
    expect(answers.map(remaining)).toEqual([[2], [1], [0], [0]]);
    for (const [i, answer] of answers.entries()) {
      expect(answer.statuses).toHaveLength(1);
      expect(answer.statuses[0]).toMatchObject({
        code: i < 3 ? 'OK' : 'OVER_LIMIT',
        current_limit: { name: `${P.api}.minute`, requests_per_unit: 3, unit: 'MINUTE' },
      });
      const reset = answer.statuses[0].duration_until_reset;
      const resetMs = (reset?.seconds ?? 0) * 1000 + (reset?.nanos ?? 0) / 1e6;
      expect(resetMs).toBeGreaterThan(0);
      expect(resetMs).toBeLessThanOrEqual(60_000);
    }
    expect(headers(answers[0])).toEqual({
      'ratelimit-name': P.api,
      'ratelimit-limit': '3',
      'ratelimit-remaining': '2',
      'ratelimit-reset': expect.stringMatching(/^\d+$/),
      ratelimit: expect.stringMatching(new RegExp(`^"${P.api}\\.minute";r=2;t=\\d+$`)),
      'ratelimit-policy': `"${P.api}.minute";q=3`,
    });
    const denied = headers(answers[3]);
    expect(denied).toMatchObject({ 'ratelimit-remaining': '0', 'ratelimit-limit': '3' });
    expect(Number(denied['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(denied['retry-after'])).toBeLessThanOrEqual(60);
  });

  it('keys by the selector entries: another principal of the same tenant has its own counter', async () => {
    const tenant = uniqueName('acme');
    for (let i = 0; i < 3; i++) await sut.call(api(tenant, 'p1'));

    const other = await sut.call(api(tenant, 'p2'));

    expect(other.overall_code).toBe('OK');
    expect(remaining(other)).toEqual([2]);
  });

  it('charges hits_addend as the cost, and a descriptor hits_addend over it (0 = a peek)', async () => {
    const tenant = uniqueName('acme');

    const byRequest = await sut.call(hits(tenant, { hits_addend: 4 }));
    const byDescriptor = await sut.call(hits(tenant, { hits_addend: 4 }, 3));
    const peek = await sut.call(hits(tenant, {}, 0));
    const tooMuch = await sut.call(hits(tenant, { hits_addend: 4 }));
    const exact = await sut.call(hits(tenant, { hits_addend: 3 }));

    expect(remaining(byRequest)).toEqual([6]);
    expect(remaining(byDescriptor)).toEqual([3]);
    expect(peek.overall_code).toBe('OK');
    expect(remaining(peek)).toEqual([3]);
    // a denial consumes nothing, so the 3 units left are still there for a cost of 3
    expect(tooMuch.overall_code).toBe('OVER_LIMIT');
    expect(remaining(tooMuch)).toEqual([3]);
    expect(exact.overall_code).toBe('OK');
    expect(remaining(exact)).toEqual([0]);
  });

  it('decides every descriptor: OVER_LIMIT if any is denied, one status each in request order', async () => {
    const exhausted = uniqueName('acme');
    for (let i = 0; i < 3; i++) await sut.call(api(exhausted));
    const fresh = uniqueName('acme');

    const answer = await sut.call({
      domain: DOMAIN,
      descriptors: [...hits(fresh).descriptors!, ...api(exhausted).descriptors!],
    });

    expect(answer.overall_code).toBe('OVER_LIMIT');
    expect(answer.statuses.map((s) => s.code)).toEqual(['OK', 'OVER_LIMIT']);
    expect(remaining(answer)).toEqual([9, 0]);
    expect(headers(answer)).toMatchObject({
      'ratelimit-name': P.api,
      'ratelimit-policy': `"${P.hits}.hourly";q=10, "${P.api}.minute";q=3`,
    });
  });

  it('answers OK without a limit when no policy applies (another domain)', async () => {
    const answer = await sut.call({ ...api(uniqueName('acme')), domain: `${run}-elsewhere` });

    expect(answer).toMatchObject({ overall_code: 'OK', statuses: [{ code: 'OK' }] });
    expect(answer.statuses[0].current_limit).toBeUndefined();
  });

  it('leaves current_limit out when the period is not one Envoy unit, but reports what is left', async () => {
    const answer = await sut.call({
      domain: DOMAIN,
      descriptors: [
        {
          entries: [
            { key: 'tenant', value: uniqueName('acme') },
            { key: 'route', value: 'odd' },
          ],
        },
      ],
    });

    expect(answer.statuses[0].current_limit).toBeUndefined();
    expect(remaining(answer)).toEqual([4]);
  });

  it.each([
    ['no authorization metadata', null],
    ['an unknown token', 'not-a-token-of-this-stack'],
  ])('refuses %s with UNAUTHENTICATED and consumes nothing', async (_case, token) => {
    const tenant = uniqueName('acme');

    const error = await sut.failure(api(tenant), token);
    const after = await sut.call(api(tenant));

    expect(error.code).toBe(status.UNAUTHENTICATED);
    expect(remaining(after)).toEqual([2]);
  });

  it('refuses a descriptor the engine finds invalid with INVALID_ARGUMENT and the decision code', async () => {
    // given a descriptor its rule fits whole, with a value the engine refuses (a control character).
    // (This test used a descriptor without the principal its policy keys by, answered
    // selector.identity_missing: since rules match whole descriptors, that one fits no rule and is
    // answered OK — envoy-rls.conformance.test.ts.)
    const request: RlsRequest = {
      domain: DOMAIN,
      descriptors: [
        {
          entries: [
            { key: 'tenant', value: uniqueName('acme') },
            { key: 'principal', value: 'svc\u0007' },
            { key: 'route', value: 'api' },
          ],
        },
      ],
    };

    const error = await sut.failure(request);

    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/^descriptors\[0\]: selector\.identity_invalid/);
  });

  it('refuses a malformed request with INVALID_ARGUMENT naming the field', async () => {
    const noDescriptors = await sut.failure({ domain: DOMAIN, descriptors: [] });
    const repeated = await sut.failure({
      domain: DOMAIN,
      descriptors: [
        {
          entries: [
            { key: 'tenant', value: 'a' },
            { key: 'tenant', value: 'b' },
          ],
        },
      ],
    });

    expect([noDescriptors.code, noDescriptors.details]).toEqual([
      status.INVALID_ARGUMENT,
      'descriptors: at least one descriptor is required',
    ]);
    expect([repeated.code, repeated.details]).toEqual([
      status.INVALID_ARGUMENT,
      'descriptors[0].entries[1].key: "tenant" is already set by an earlier entry',
    ]);
  });

  it('echoes the request id in the initial metadata of an answer and of a refusal', async () => {
    // given a caller's own id on an answered call and on a refused one, and a call without one
    const given = uniqueName('req');

    const answered = await sut.echoedRequestId(hits(uniqueName('acme')), { 'x-request-id': `${given}-ok` });
    const refused = await sut.echoedRequestId(
      { domain: DOMAIN, descriptors: [] },
      { 'x-request-id': `${given}-bad` },
    );
    const minted = await sut.echoedRequestId(hits(uniqueName('acme')));

    expect(answered).toEqual({ requestId: `${given}-ok`, code: status.OK });
    expect(refused).toEqual({ requestId: `${given}-bad`, code: status.INVALID_ARGUMENT });
    expect(minted.code).toBe(status.OK);
    expect(minted.requestId).toMatch(/^\S{4,}$/);
  });

  it('lets callers cancel calls in flight, and answers the next ones', async () => {
    // given calls the caller cancels while their decisions are in flight (the answer then finds an
    // ended call, whose objects were let go of: release-ended-calls.ts)
    const ended = [
      ...(await sut.cancelledCalls(hits(uniqueName('acme')), 20, 0)),
      ...(await sut.cancelledCalls(hits(uniqueName('acme')), 20, 1)),
    ];

    const next = await sut.call(hits(uniqueName('acme')));

    expect(ended).toContain(status.CANCELLED);
    expect(next.overall_code).toBe('OK');
  });

  it('reports the gRPC server in readiness', async () => {
    const ready = await sut.readiness();

    expect(ready.components.grpc).toMatchObject({ status: 'up' });
    expect(ready.status).toBe('healthy');
  });
});

describe(`${GrpcRlsServer.name} with Redis unreachable`, () => {
  let sut: RlsStack;
  const down = uniqueName('e2e-rls-down');

  beforeAll(async () => {
    // Port 1 (tcpmux) is not served on these hosts: every connection attempt is refused.
    sut = await RlsStack.start(
      'redis://127.0.0.1:1',
      `
policies:
  - name: ${down}-closed
    match: { route: closed }
    key: [tenant]
    windows: [{ name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }]
    on_backend_failure: fail_closed
  - name: ${down}-open
    match: { route: open }
    key: [tenant]
    windows: [{ name: hourly, role: sustained, algorithm: fixed_window, limit: 10, period: 1h }]
    on_backend_failure: fail_open
`,
    );
  });
  afterAll(async () => {
    await sut?.close();
  });

  const request = (route: string): RlsRequest => ({
    domain: 'edge',
    descriptors: [
      {
        entries: [
          { key: 'tenant', value: 'acme' },
          { key: 'route', value: route },
        ],
      },
    ],
  });

  it('answers fail_closed with UNAVAILABLE, so that Envoy applies its own failure_mode_deny', async () => {
    const error = await sut.failure(request('closed'));

    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toMatch(/^descriptors\[0\]: backend\.(timeout|unavailable|error): backend_/);
  });

  it('answers fail_open with OK (degraded)', async () => {
    const answer = await sut.call(request('open'));

    expect(answer).toMatchObject({ overall_code: 'OK', statuses: [{ code: 'OK' }] });
  });

  it('stops serving when the app shuts down', async () => {
    await sut.stopApp();

    const error = await sut.failure(request('open'));

    expect(error.code).toBe(status.UNAVAILABLE);
  });
});
