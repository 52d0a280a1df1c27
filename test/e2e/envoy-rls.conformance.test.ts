/**
 * Envoy RLS conformance: what an Envoy client (or a go-control-plane one) sees from Tally, case by
 * case, against the behaviour envoyproxy/ratelimit documents — and where Tally departs on purpose
 * (docs/envoy.md, "Parity with envoyproxy/ratelimit"). Real DecisionApiModule, real gRPC server and
 * client from the vendored protos, real Redis. Every case uses its own tenant, so the rows are
 * independent of each other and of earlier runs.
 */
import { status } from '@grpc/grpc-js';
import { type RlsDescriptor, type RlsRequest } from '@tally/envoy-rls';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { uniqueName } from '@tally/testing';
import { RlsStack, type Answer } from './support/rls-stack.harness';

const run = uniqueName('e2e-rls-parity');
const DOMAIN = `${run}-edge`;
const P = { api: `${run}-api`, gold: `${run}-gold`, shadow: `${run}-shadow` };
// The rules of an envoyproxy/ratelimit config, as Tally policies: domain → route (→ plan), per tenant.
const POLICIES = `
policies:
  - name: ${P.api}
    match: { domain: ${DOMAIN}, route: api }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 3, period: 1h }
  - name: ${P.gold}
    match: { domain: ${DOMAIN}, route: api, plan: gold }
    key: [tenant]
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 5, period: 1h }
  - name: ${P.shadow}
    match: { domain: ${DOMAIN}, route: trial }
    key: [tenant]
    mode: shadow
    windows:
      - { name: hourly, role: sustained, algorithm: fixed_window, limit: 1, period: 1h }
`;

type Entries = Record<string, string>;
const descriptor = (entries: Entries, extra: Partial<RlsDescriptor> = {}): RlsDescriptor => ({
  entries: Object.entries(entries).map(([key, value]) => ({ key, value })),
  ...extra,
});
const request = (descriptors: RlsDescriptor[], extra: Partial<RlsRequest> = {}): RlsRequest => ({
  domain: DOMAIN,
  descriptors,
  ...extra,
});
const api = (tenant: string, more: Entries = {}): Entries => ({ tenant, route: 'api', ...more });

/** What a row compares: the codes, the remaining units and the limit names, or the gRPC error. */
interface Seen {
  overall?: string;
  codes?: string[];
  remaining?: number[];
  limits?: (string | null)[];
  error?: [status, string];
}
const seen = (answer: Answer): Seen => ({
  overall: answer.overall_code,
  codes: answer.statuses.map((s) => s.code),
  remaining: answer.statuses.map((s) => s.limit_remaining ?? 0),
  limits: answer.statuses.map((s) => s.current_limit?.name ?? null),
});

describe('Envoy RLS conformance (envoyproxy/ratelimit parity)', () => {
  let sut: RlsStack;
  /** One call, seen as a row compares it. */
  const call = async (r: RlsRequest): Promise<Seen> => {
    try {
      return seen(await sut.call(r));
    } catch (error) {
      const e = error as { code: status; details: string };
      return { error: [e.code, e.details] };
    }
  };
  /** The state of the tenant's `api` counter: a peek (descriptor hits_addend 0) spends nothing. */
  const left = async (tenant: string): Promise<number[] | undefined> =>
    (await call(request([descriptor(api(tenant), { hits_addend: { value: 0 } })]))).remaining;

  beforeAll(async () => {
    sut = await RlsStack.start(inject('redisUrl'), POLICIES);
  });
  afterAll(async () => {
    await sut?.close();
  });

  it.each<{ case: string; run: (tenant: string) => Promise<unknown>; expected: unknown }>([
    {
      case: 'a matching descriptor is counted against its rule, OVER_LIMIT past it',
      run: async (t) => {
        const answers = [];
        for (let i = 0; i < 4; i++) answers.push(await call(request([descriptor(api(t))])));
        return answers;
      },
      expected: [1, 2, 3, 4].map((n) => ({
        overall: n <= 3 ? 'OK' : 'OVER_LIMIT',
        codes: [n <= 3 ? 'OK' : 'OVER_LIMIT'],
        remaining: [Math.max(0, 3 - n)],
        limits: [`${P.api}.hourly`],
      })),
    },
    {
      // departure 1 (fixed): a descriptor lacking an entry a rule needs was INVALID_ARGUMENT
      // (selector.identity_missing), which Envoy's failure_mode_deny turned into a denial
      case: 'no matching rule (an entry less than any rule) → OK, uncounted',
      run: async (t) => [await call(request([descriptor({ route: 'api' })])), await left(t)],
      expected: [{ overall: 'OK', codes: ['OK'], remaining: [0], limits: [null] }, [3]],
    },
    {
      case: 'no matching rule (a value no rule names) → OK, uncounted',
      run: async (t) => [await call(request([descriptor({ tenant: t, route: 'unknown' })])), await left(t)],
      expected: [{ overall: 'OK', codes: ['OK'], remaining: [0], limits: [null] }, [3]],
    },
    {
      // a descriptor key no policy can name (Envoy keys are free text) was INVALID_ARGUMENT too
      case: 'no matching rule (a key no policy can name, beside a counted descriptor) → OK, uncounted',
      run: async (t) => [
        await call(request([descriptor({ tenant: t, 'X-Api-Key': 'k' }), descriptor(api(t))])),
        await left(t),
      ],
      expected: [
        { overall: 'OK', codes: ['OK', 'OK'], remaining: [0, 2], limits: [null, `${P.api}.hourly`] },
        [2],
      ],
    },
    {
      // departure 2 (fixed): the extra entry used to be counted against the shorter rule
      case: 'a descriptor with an extra entry is not counted against the shorter rule',
      run: async (t) => {
        for (let i = 0; i < 4; i++) await call(request([descriptor(api(t, { generic_key: 'x' }))]));
        return [await call(request([descriptor(api(t, { generic_key: 'x' }))])), await left(t)];
      },
      expected: [{ overall: 'OK', codes: ['OK'], remaining: [0], limits: [null] }, [3]],
    },
    {
      case: 'the longer descriptor is counted by the longer rule only (whole-descriptor match)',
      run: async (t) => [await call(request([descriptor(api(t, { plan: 'gold' }))])), await left(t)],
      expected: [{ overall: 'OK', codes: ['OK'], remaining: [4], limits: [`${P.gold}.hourly`] }, [3]],
    },
    {
      // departure 3 (fixed): an empty domain was answered OK
      case: 'an empty domain → INVALID_ARGUMENT',
      run: async (t) => call(request([descriptor(api(t))], { domain: '' })),
      expected: { error: [status.INVALID_ARGUMENT, 'domain: must not be empty'] },
    },
    {
      case: 'no descriptors → INVALID_ARGUMENT',
      run: async () => call(request([])),
      expected: { error: [status.INVALID_ARGUMENT, 'descriptors: at least one descriptor is required'] },
    },
    {
      case: 'request hits_addend is the cost of every descriptor; 0 means 1',
      run: async (t) => [
        (await call(request([descriptor(api(t))], { hits_addend: 2 }))).remaining,
        (await call(request([descriptor(api(t))], { hits_addend: 0 }))).remaining,
      ],
      expected: [[1], [0]],
    },
    {
      case: 'descriptor hits_addend overrides the request one (0 set on the descriptor: a peek)',
      run: async (t) => [
        (await call(request([descriptor(api(t), { hits_addend: { value: 2 } })], { hits_addend: 3 })))
          .remaining,
        (await call(request([descriptor(api(t), { hits_addend: { value: 0 } })], { hits_addend: 3 })))
          .remaining,
      ],
      expected: [[1], [1]],
    },
    {
      case: 'shadow_mode: a shadow rule over its limit never denies, and reports its limit',
      run: async (t) => {
        const answers = [];
        for (let i = 0; i < 3; i++)
          answers.push(await call(request([descriptor({ tenant: t, route: 'trial' })])));
        return answers;
      },
      // it reports its window (the true remaining: a would-deny does not spend), as the peer reports its limit
      expected: [1, 2, 3].map(() => ({
        overall: 'OK',
        codes: ['OK'],
        remaining: [0],
        limits: [`${P.shadow}.hourly`],
      })),
    },
    {
      case: 'per-descriptor statuses; overall OVER_LIMIT when any descriptor is over',
      run: async (t) => {
        const spent = `${t}-spent`;
        await call(request([descriptor(api(spent))], { hits_addend: 3 }));
        return call(request([descriptor(api(t)), descriptor(api(spent)), descriptor({ route: 'none' })]));
      },
      expected: {
        overall: 'OVER_LIMIT',
        codes: ['OK', 'OVER_LIMIT', 'OK'],
        remaining: [2, 0, 0],
        limits: [`${P.api}.hourly`, `${P.api}.hourly`, null],
      },
    },
    {
      // Tally's choice (kept): the peer charges a denied hit; Tally does not, so what is left stays usable
      case: 'a denied hit is not charged, and the true remaining is reported',
      run: async (t) => [
        await call(request([descriptor(api(t))], { hits_addend: 2 })),
        await call(request([descriptor(api(t))], { hits_addend: 2 })),
        await call(request([descriptor(api(t))], { hits_addend: 1 })),
      ],
      expected: [
        { overall: 'OK', codes: ['OK'], remaining: [1], limits: [`${P.api}.hourly`] },
        { overall: 'OVER_LIMIT', codes: ['OVER_LIMIT'], remaining: [1], limits: [`${P.api}.hourly`] },
        { overall: 'OK', codes: ['OK'], remaining: [0], limits: [`${P.api}.hourly`] },
      ],
    },
    {
      case: 'the descriptor limit override replaces the rule limit (N per unit), on its own counter',
      run: async (t) => {
        const limited = (n: number, unit: string) =>
          request([descriptor(api(t), { limit: { requests_per_unit: n, unit } })]);
        return [
          await call(limited(100, 'DAY')),
          await call(limited(2, 'HOUR')),
          await call(limited(2, 'HOUR')),
          await call(limited(2, 'HOUR')),
          await left(t),
        ];
      },
      expected: [
        { overall: 'OK', codes: ['OK'], remaining: [99], limits: [`${P.api}.envoy_override_day`] },
        { overall: 'OK', codes: ['OK'], remaining: [1], limits: [`${P.api}.envoy_override_hour`] },
        { overall: 'OK', codes: ['OK'], remaining: [0], limits: [`${P.api}.envoy_override_hour`] },
        {
          overall: 'OVER_LIMIT',
          codes: ['OVER_LIMIT'],
          remaining: [0],
          limits: [`${P.api}.envoy_override_hour`],
        },
        [3],
      ],
    },
    {
      // departure (docs/envoy.md): the peer applies an override even where no rule matches
      case: 'a limit override on a descriptor no rule fits stays uncounted',
      run: async (t) =>
        call(
          request([
            descriptor({ tenant: t, route: 'none' }, { limit: { requests_per_unit: 1, unit: 'MINUTE' } }),
          ]),
        ),
      expected: { overall: 'OK', codes: ['OK'], remaining: [0], limits: [null] },
    },
    {
      case: 'a limit override of a unit Tally cannot hold (YEAR) → INVALID_ARGUMENT',
      run: async (t) =>
        call(request([descriptor(api(t), { limit: { requests_per_unit: 1, unit: 'YEAR' } })])),
      expected: {
        error: [
          status.INVALID_ARGUMENT,
          'descriptors[0].limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH',
        ],
      },
    },
  ])('$case', async ({ run: act, expected }) => {
    const tenant = uniqueName('acme');

    const sutSeen = await act(tenant);

    expect(sutSeen).toEqual(expected);
  });

  it('adds the rate-limit headers of the binding descriptor to what Envoy forwards', async () => {
    const tenant = uniqueName('acme');

    const answer = await sut.call(request([descriptor(api(tenant))]));

    const headers = Object.fromEntries((answer.response_headers_to_add ?? []).map((h) => [h.key, h.value]));
    expect(headers).toMatchObject({ 'ratelimit-limit': '3', 'ratelimit-remaining': '2' });
    expect(Number(headers['ratelimit-reset'])).toBeGreaterThan(0);
    // envoyproxy/ratelimit's names only with TALLY_GRPC_X_RATELIMIT_HEADERS=on (below)
    expect(Object.keys(headers).filter((k) => k.startsWith('x-'))).toEqual([]);
  });
});

describe('Envoy RLS conformance: TALLY_GRPC_X_RATELIMIT_HEADERS=on', () => {
  let sut: RlsStack;

  beforeAll(async () => {
    sut = await RlsStack.start(inject('redisUrl'), POLICIES, {
      env: { TALLY_GRPC_X_RATELIMIT_HEADERS: 'on' },
    });
  });
  afterAll(async () => {
    await sut?.close();
  });

  it("adds envoyproxy/ratelimit's x-ratelimit-* headers with the binding descriptor's numbers", async () => {
    const tenant = uniqueName('acme');
    await sut.call(request([descriptor(api(tenant))], { hits_addend: 3 }));

    const answer = await sut.call(request([descriptor(api(tenant)), descriptor({ route: 'none' })]));

    const headers = Object.fromEntries((answer.response_headers_to_add ?? []).map((h) => [h.key, h.value]));
    expect(answer.overall_code).toBe('OVER_LIMIT');
    expect(headers).toMatchObject({ 'x-ratelimit-limit': '3', 'x-ratelimit-remaining': '0' });
    expect(headers['x-ratelimit-reset']).toBe(headers['ratelimit-reset']);
    expect(Number(headers['x-ratelimit-reset'])).toBeGreaterThan(0);
    expect(Number(headers['x-ratelimit-reset'])).toBeLessThanOrEqual(3600);
  });
});
