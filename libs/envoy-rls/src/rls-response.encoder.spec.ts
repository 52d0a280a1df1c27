import { describe, expect, it } from 'vitest';
import { loadRateLimitService } from './rls-proto';
import { encodeRlsResponse } from './rls-response.encoder';
import type { RlsCode, RlsDescriptorStatus, RlsHeaderValue, RlsResponse, RlsUnit } from './rls.types';

/** protobufjs's bytes for a response: `fromObject` + `encode` as @grpc/proto-loader builds them. */
const reference = (response: unknown): Buffer =>
  loadRateLimitService().definition.ShouldRateLimit.responseSerialize(response);

/** A small seeded generator: the same responses on every run, many shapes per run. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  return { next, int, pick };
}

const CODES: RlsCode[] = ['UNKNOWN', 'OK', 'OVER_LIMIT'];
const UNITS: RlsUnit[] = ['UNKNOWN', 'SECOND', 'MINUTE', 'HOUR', 'DAY', 'MONTH', 'YEAR'];
/** Around every varint length boundary, 0, the uint32 edge and past it (protobufjs wraps `>>> 0`). */
const NUMBERS = [
  0,
  1,
  127,
  128,
  16_383,
  16_384,
  2_097_151,
  2_097_152,
  2 ** 28,
  2 ** 32 - 1,
  2 ** 32,
  1e12,
  -1,
  7.9,
];
const SECONDS = [0, 1, 59, 127, 128, 86_400, 2 ** 31, 2 ** 40, Number.MAX_SAFE_INTEGER];
const NANOS = [0, 1, 127, 128, 999_999_999, 2 ** 31 - 1];
/** Empty, short, and past 40 characters (protobufjs writes those through Node) and 127/128 bytes. */
const TEXTS = [
  '',
  'a',
  'bench.second',
  '"bench.second";q=1000000000;w=1',
  'x'.repeat(40),
  'y'.repeat(127),
  'z'.repeat(128),
];

function generated(seed: number): RlsResponse {
  const r = random(seed);
  const maybe = <T>(value: () => T): T | undefined => (r.next() < 0.8 ? value() : undefined);
  const status = (): RlsDescriptorStatus =>
    ({
      code: maybe(() => r.pick(CODES)),
      current_limit: maybe(() => ({
        name: maybe(() => r.pick(TEXTS)),
        requests_per_unit: maybe(() => r.pick(NUMBERS)),
        unit: maybe(() => r.pick(UNITS)),
      })),
      limit_remaining: maybe(() => r.pick(NUMBERS)),
      duration_until_reset: maybe(() => ({
        seconds: maybe(() => r.pick(SECONDS)),
        nanos: maybe(() => r.pick(NANOS)),
      })),
    }) as RlsDescriptorStatus;
  const header = (): RlsHeaderValue =>
    ({ key: maybe(() => r.pick(TEXTS)), value: maybe(() => r.pick(TEXTS)) }) as RlsHeaderValue;
  return {
    overall_code: maybe(() => r.pick(CODES)),
    statuses: Array.from({ length: r.int(6) }, status),
    response_headers_to_add: Array.from({ length: r.int(4) }, header),
  } as RlsResponse;
}

/** Fractional numbers are the one generated value protobufjs truncates where this encoder defers. */
const fractional = (response: RlsResponse) => JSON.stringify(response).includes('7.9');

describe(encodeRlsResponse.name, () => {
  it('writes the bytes protobufjs writes, on 2,000 generated responses', () => {
    let written = 0;
    for (let seed = 1; seed <= 2000; seed++) {
      const response = generated(seed);
      const ours = encodeRlsResponse(response);
      if (fractional(response)) continue;
      expect(ours, `seed ${seed}: ${JSON.stringify(response)}`).toBeDefined();
      expect(ours?.toString('hex'), `seed ${seed}`).toBe(reference(response).toString('hex'));
      written++;
    }
    expect(written).toBeGreaterThan(500);
  });

  it('writes the answer Tally gives for one descriptor', () => {
    const response: RlsResponse = {
      overall_code: 'OK',
      statuses: [
        {
          code: 'OK',
          current_limit: { name: 'bench-tenant.second', requests_per_unit: 1_000_000_000, unit: 'SECOND' },
          limit_remaining: 999_999_999,
          duration_until_reset: { seconds: 1, nanos: 0 },
        },
      ],
      response_headers_to_add: [
        { key: 'ratelimit-policy', value: '"bench-tenant.second";q=1000000000;w=1' },
        { key: 'ratelimit', value: '"bench-tenant.second";r=999999999;t=1' },
      ],
    };

    expect(encodeRlsResponse(response)?.toString('hex')).toBe(reference(response).toString('hex'));
  });

  it('writes an empty answer as protobufjs does', () => {
    const empty = { statuses: [], response_headers_to_add: [] } as unknown as RlsResponse;

    expect(encodeRlsResponse(empty)?.length).toBe(0);
    expect(reference(empty).length).toBe(0);
  });

  it.each([
    ['a header value outside ASCII', { response_headers_to_add: [{ key: 'k', value: 'é' }] }],
    ['a lone surrogate in a limit name', { statuses: [{ current_limit: { name: '\ud800' } }] }],
    ['an enum name it does not know', { overall_code: 'MAYBE' }],
    ['a numeric enum', { statuses: [{ code: 2 }] }],
    ['negative seconds', { statuses: [{ duration_until_reset: { seconds: -1, nanos: 0 } }] }],
    ['fractional nanos', { statuses: [{ duration_until_reset: { seconds: 1, nanos: 0.5 } }] }],
    ['a count as text', { statuses: [{ limit_remaining: '5' }] }],
    ['statuses that are not an array', { statuses: { 0: {} } }],
  ])('leaves %s to protobufjs, and the server still answers its bytes', (_, fields) => {
    const response = { statuses: [], response_headers_to_add: [], ...fields } as unknown as RlsResponse;

    expect(encodeRlsResponse(response)).toBeUndefined();
    // What the server runs: this encoder, else protobufjs, so the answer is written either way.
    const encode = loadRateLimitService().shouldRateLimit.encode;
    let served: string | Error;
    let expected: string | Error;
    try {
      served = Buffer.from(encode(response)).toString('hex');
    } catch (error) {
      served = error as Error;
    }
    try {
      expected = reference(response).toString('hex');
    } catch (error) {
      expected = error as Error;
    }
    expect(served).toEqual(expected);
  });

  it('reads back, through protobufjs, what it wrote', () => {
    const response = generated(7);
    const decode = loadRateLimitService().definition.ShouldRateLimit.responseDeserialize;
    const ours = encodeRlsResponse(response);

    expect(ours).toBeDefined();
    expect(decode(ours as Buffer)).toEqual(decode(reference(response)));
  });
});
