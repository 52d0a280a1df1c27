import { describe, expect, it } from 'vitest';
import { MAX_DESCRIPTOR_ENTRIES, toDecisionRequests } from './rls-request.mapper';
import { type RlsDescriptor, type RlsRequest } from './rls.types';

const entries = (...pairs: [string, string][]): RlsDescriptor => ({
  entries: pairs.map(([key, value]) => ({ key, value })),
});

const LIMITS = { maxDescriptors: 4 };

describe(toDecisionRequests.name, () => {
  it.each<{ case: string; request: RlsRequest; expected: unknown[] }>([
    {
      case: 'selector dims become selectors, other keys attributes, the domain an attribute',
      request: {
        domain: 'edge',
        descriptors: [
          entries(['tenant', 'acme'], ['principal', 'svc-42'], ['route', 'evaluate'], ['generic_key', 'api']),
        ],
      },
      expected: [
        {
          selectors: { tenant: 'acme', principal: 'svc-42', route: 'evaluate' },
          attributes: { domain: 'edge', generic_key: 'api' },
          cost: 1,
        },
      ],
    },
    {
      case: 'token and client are selectors too',
      request: { domain: 'edge', descriptors: [entries(['token', 'tk'], ['client', 'c1'])] },
      expected: [{ selectors: { token: 'tk', client: 'c1' }, attributes: { domain: 'edge' }, cost: 1 }],
    },
    {
      case: 'the request hits_addend is the cost of every descriptor',
      request: {
        domain: 'd',
        hits_addend: 7,
        descriptors: [entries(['tenant', 'a']), entries(['tenant', 'b'])],
      },
      expected: [
        { selectors: { tenant: 'a' }, attributes: { domain: 'd' }, cost: 7 },
        { selectors: { tenant: 'b' }, attributes: { domain: 'd' }, cost: 7 },
      ],
    },
    {
      case: 'hits_addend 0 (unset on the wire) means 1',
      request: { domain: 'd', hits_addend: 0, descriptors: [entries(['tenant', 'a'])] },
      expected: [{ selectors: { tenant: 'a' }, attributes: { domain: 'd' }, cost: 1 }],
    },
    {
      case: "a descriptor's own hits_addend wins, 0 included (a peek)",
      request: {
        domain: 'd',
        hits_addend: 3,
        descriptors: [
          { ...entries(['tenant', 'a']), hits_addend: { value: 9 } },
          { ...entries(['tenant', 'b']), hits_addend: { value: 0 } },
          { ...entries(['tenant', 'c']), hits_addend: {} },
          { ...entries(['tenant', 'd']), hits_addend: null },
        ],
      },
      expected: [
        { selectors: { tenant: 'a' }, attributes: { domain: 'd' }, cost: 9 },
        { selectors: { tenant: 'b' }, attributes: { domain: 'd' }, cost: 0 },
        { selectors: { tenant: 'c' }, attributes: { domain: 'd' }, cost: 0 },
        { selectors: { tenant: 'd' }, attributes: { domain: 'd' }, cost: 3 },
      ],
    },
    {
      case: "a descriptor's limit override becomes the decision's window override",
      request: {
        domain: 'd',
        descriptors: [{ ...entries(['tenant', 'a']), limit: { requests_per_unit: 50, unit: 'HOUR' } }],
      },
      expected: [
        {
          selectors: { tenant: 'a' },
          attributes: { domain: 'd' },
          cost: 1,
          windowOverride: {
            name: 'envoy_override_hour',
            role: 'sustained',
            algorithm: 'fixed_window',
            limit: 50,
            periodMs: 3_600_000,
          },
        },
      ],
    },
    {
      case: 'values pass on untrusted, for the engine to judge (empty, untrimmed)',
      request: {
        domain: 'd',
        descriptors: [{ entries: [{ key: 'tenant' }, { key: 'plan', value: ' gold ' }] }],
      },
      expected: [{ selectors: { tenant: '' }, attributes: { domain: 'd', plan: ' gold ' }, cost: 1 }],
    },
  ])('$case', ({ request, expected }) => {
    const sut = toDecisionRequests(request, LIMITS);

    // every request asks the engine to match whole descriptors (docs/envoy.md, "Matching")
    expect(sut).toEqual({
      ok: true,
      requests: expected.map((e) => ({ ...(e as object), wholeDescriptor: true })),
      ruleless: new Set(),
    });
  });

  it.each<{ case: string; request: RlsRequest; message: string }>([
    {
      case: 'no descriptors',
      request: { domain: 'd' },
      message: 'descriptors: at least one descriptor is required',
    },
    {
      case: 'too many descriptors',
      request: { domain: 'd', descriptors: Array.from({ length: 5 }, () => entries(['tenant', 'a'])) },
      message: 'descriptors: at most 4 descriptors per request',
    },
    {
      case: 'a descriptor with more entries than selector dims and attributes together',
      request: {
        domain: 'd',
        descriptors: [
          entries(['tenant', 'a']),
          entries(...Array.from({ length: 38 }, (_, i): [string, string] => [`k${i}`, 'v'])),
        ],
      },
      message: 'descriptors[1].entries: at most 37 entries per descriptor',
    },
    {
      case: 'a descriptor without entries',
      request: { domain: 'd', descriptors: [entries(['tenant', 'a']), { entries: [] }] },
      message: 'descriptors[1].entries: at least one entry is required',
    },
    {
      case: 'an empty key',
      request: { domain: 'd', descriptors: [{ entries: [{ key: 'tenant', value: 'a' }, { value: 'x' }] }] },
      message: 'descriptors[0].entries[1].key: must not be empty',
    },
    {
      case: 'a repeated selector',
      request: { domain: 'd', descriptors: [entries(['tenant', 'a'], ['principal', 'p'], ['tenant', 'b'])] },
      message: 'descriptors[0].entries[2].key: "tenant" is already set by an earlier entry',
    },
    {
      case: 'a repeated attribute',
      request: { domain: 'd', descriptors: [entries(['generic_key', 'a'], ['generic_key', 'b'])] },
      message: 'descriptors[0].entries[1].key: "generic_key" is already set by an earlier entry',
    },
    {
      case: 'no domain (envoyproxy/ratelimit refuses it too)',
      request: { descriptors: [entries(['tenant', 'acme'])] },
      message: 'domain: must not be empty',
    },
    {
      case: 'an empty domain',
      request: { domain: '', descriptors: [entries(['tenant', 'acme'])] },
      message: 'domain: must not be empty',
    },
    {
      case: 'a limit override of no usable unit',
      request: {
        domain: 'd',
        descriptors: [
          entries(['tenant', 'a']),
          { ...entries(['tenant', 'b']), limit: { requests_per_unit: 1, unit: 'YEAR' } },
        ],
      },
      message: 'descriptors[1].limit.unit: must be SECOND, MINUTE, HOUR, DAY or MONTH',
    },
    {
      case: 'an entry named domain beside the request domain',
      request: { domain: 'edge', descriptors: [entries(['domain', 'other'])] },
      message: 'descriptors[0].entries[0].key: "domain" is already set by the request domain',
    },
  ])('refuses $case', ({ request, message }) => {
    const sut = toDecisionRequests(request, LIMITS);

    expect(sut).toEqual({ ok: false, message });
  });

  it('marks descriptors with a key no policy can name as ruleless, and maps them all the same', () => {
    const sut = toDecisionRequests(
      {
        domain: 'd',
        descriptors: [
          entries(['tenant', 'a'], ['X-Api-Key', 'k']),
          entries(['tenant', 'a'], ['generic_key', 'g']),
          entries(['tenant', 'a'], ['path/segment', 'p']),
        ],
      },
      LIMITS,
    );

    expect(sut.ok && [...sut.ruleless]).toEqual([0, 2]);
    expect(sut.ok && sut.requests[0].selectors).toEqual({ tenant: 'a' });
  });

  it('takes exactly the caps: maxDescriptors descriptors of MAX_DESCRIPTOR_ENTRIES entries', () => {
    // given: every selector dim once, and attributes up to the engine's limit
    const full = entries(
      ...['tenant', 'principal', 'token', 'client', 'route'].map((k): [string, string] => [k, 'v']),
      ...Array.from({ length: MAX_DESCRIPTOR_ENTRIES - 5 }, (_, i): [string, string] => [`a${i}`, 'v']),
    );

    const sut = toDecisionRequests({ domain: 'd', descriptors: [full, full, full, full] }, LIMITS);

    expect(sut.ok && sut.requests.length).toBe(4);
  });
});
