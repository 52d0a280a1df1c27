import { describe, expect, it } from 'vitest';
import { loadRateLimitService, RLS_SERVICE_NAME } from './rls-proto';
import type { RlsResponse } from './rls.types';

/**
 * Field numbers are the wire contract with Envoy: these bytes are written out by hand from
 * envoyproxy/envoy's rls.proto and ratelimit.proto, so a renumbered field in our declarations fails.
 */
describe(loadRateLimitService.name, () => {
  const sut = loadRateLimitService();
  const method = sut.definition.ShouldRateLimit;

  it('serves envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit', () => {
    expect(method.path).toBe(`/${RLS_SERVICE_NAME}/ShouldRateLimit`);
    expect(method.requestStream || method.responseStream).toBe(false);
  });

  it('reads a request with upstream field numbers', () => {
    // domain(1)="d", descriptors(2)={entries(1)={key(1)="k",value(2)="v"}, hits_addend(3)={value(1)=5}}, hits_addend(3)=3
    const wire = Buffer.from('0a0164120c0a060a016b1201761a0208051803', 'hex');

    expect(method.requestDeserialize(wire)).toEqual({
      domain: 'd',
      descriptors: [{ entries: [{ key: 'k', value: 'v' }], hits_addend: { value: 5 } }],
      hits_addend: 3,
    });
  });

  it('writes a response with upstream field numbers', () => {
    const response = {
      overall_code: 'OVER_LIMIT',
      statuses: [
        {
          code: 'OVER_LIMIT',
          current_limit: { name: 'n', requests_per_unit: 10, unit: 'MINUTE' },
          limit_remaining: 1,
          duration_until_reset: { seconds: 2, nanos: 5 },
        },
      ],
      response_headers_to_add: [{ key: 'a', value: 'b' }],
    };

    // overall_code(1)=2, statuses(2)={code(1)=2, current_limit(2)={requests_per_unit(1)=10, unit(2)=2,
    // name(3)="n"}, limit_remaining(3)=1, duration_until_reset(4)={seconds(1)=2, nanos(2)=5}},
    // response_headers_to_add(3)={key(1)="a", value(2)="b"}
    const wire = '0802121308021207080a10021a016e1801220408021005' + '1a060a0161120162';
    expect(method.responseSerialize(response).toString('hex')).toBe(wire);
    // The server's own encoder (rls-response.encoder.ts) writes the same bytes.
    expect(Buffer.from(sut.shouldRateLimit.encode(response as RlsResponse)).toString('hex')).toBe(wire);
  });
});
