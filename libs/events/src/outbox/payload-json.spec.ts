import { describe, expect, it } from 'vitest';
import { payloadJson, type PayloadParts, type PayloadPolicy } from './payload-json';

/** A loaded policy as the engine passes it: more than the payload carries (none of it may leak). */
function policy(name: string, mode: PayloadPolicy['mode']): PayloadPolicy {
  const loaded = {
    name,
    match: {},
    unless: {},
    key: ['principal'],
    windows: [
      { name: 'burst', role: 'burst' as const, algorithm: 'token_bucket', limit: 10, periodMs: 1_000 },
      {
        name: 'sustained',
        role: 'sustained' as const,
        algorithm: 'fixed_window',
        limit: 100,
        periodMs: 60_000,
      },
    ],
    mode,
    enabled: true,
  };
  return loaded;
}

/** The reference: the payload object in contract order, stringified. */
function reference(parts: PayloadParts): string {
  return JSON.stringify({
    v: 1,
    outcome: 'allowed',
    id: parts.id,
    policy_set_version: parts.policySetVersion,
    ...(parts.tenant === undefined ? {} : { tenant: parts.tenant }),
    selectors: parts.selectors,
    attributes: parts.attributes,
    cost: parts.cost,
    ...(parts.idempotencyKey === undefined ? {} : { idempotency_key: parts.idempotencyKey }),
    policies: parts.policies.map(({ policy: p, key }) => ({
      name: p.name,
      mode: p.mode,
      key,
      windows: p.windows.map((w) => ({ name: w.name, role: w.role, limit: w.limit })),
    })),
    ...(parts.traceparent === undefined ? {} : { traceparent: parts.traceparent }),
  });
}

const api = policy('api', 'enforce');
const trial = policy('trial', 'shadow');

const cases: [string, PayloadParts][] = [
  [
    'tenant, idempotency key and two policies',
    {
      id: '01JDTESTDECISION0000000000',
      policySetVersion: 'v-test',
      tenant: 'acme',
      selectors: { tenant: 'acme', principal: 'svc-42' },
      attributes: { plan: 'pro', region: 'eu' },
      cost: 3,
      idempotencyKey: 'b-77',
      policies: [
        { policy: api, key: 'svc-42' },
        { policy: trial, key: 'acme' },
      ],
    },
  ],
  [
    'no tenant, no idempotency key, no policy',
    {
      id: '01JDTESTDECISION0000000001',
      policySetVersion: 'v2',
      tenant: undefined,
      selectors: {},
      attributes: {},
      cost: 0,
      idempotencyKey: undefined,
      policies: [],
    },
  ],
  [
    'values that JSON must escape',
    {
      id: 'id"\\',
      policySetVersion: 'v\u2028',
      tenant: 'a"c\\me',
      selectors: { tenant: 'a"c\\me', principal: 'é😀\u2029' },
      attributes: { ['__proto__']: 'x"y' },
      cost: 9007199254740991,
      idempotencyKey: 'k"\n',
      policies: [{ policy: api, key: 'é😀%3A"' }],
    },
  ],
];

describe(payloadJson.name, () => {
  it.each(cases)('is byte-identical to JSON.stringify of the payload object: %s', (_name, parts) => {
    expect(payloadJson(parts)).toBe(reference(parts));
  });

  it("writes a sampled decision's traceparent as the last field, and no byte of it otherwise", () => {
    const [, parts] = cases[0];
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const traced = payloadJson({ ...parts, traceparent });
    expect(traced).toBe(reference({ ...parts, traceparent }));
    expect(traced.endsWith(`],"traceparent":"${traceparent}"}`)).toBe(true);
    expect(payloadJson({ ...parts, traceparent: undefined })).toBe(payloadJson(parts));
    expect(payloadJson(parts)).not.toContain('traceparent');
  });

  it('stays identical when the same policy objects are reused (cached fixed parts)', () => {
    const [, parts] = cases[0];
    const first = payloadJson(parts);
    const again = payloadJson({ ...parts, policies: [{ policy: api, key: 'other' }] });
    expect(first).toBe(reference(parts));
    expect(again).toBe(reference({ ...parts, policies: [{ policy: api, key: 'other' }] }));
  });
});
