import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { OutboxPayloadV1 } from './outbox-payload.v1';
import { payloadJson, type PayloadParts, type PayloadPolicy } from './payload-json';
import { deniedPayloadPrefix, degradedPayload, PAYLOAD_PREFIX } from './payload-prefix';
import { schemaJson } from './schema-json';

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

/**
 * What the schema describes, built independently of the encoder: an object with the schema's
 * properties in the schema's order at every level (nothing the schema lacks), stringified.
 */
function inSchemaOrder(schema: TSchema, value: unknown): unknown {
  if (schema.type === 'array')
    return (value as unknown[]).map((item) => inSchemaOrder(schema.items as TSchema, item));
  if (schema.type !== 'object' || schema.properties === undefined) return value;
  const out: Record<string, unknown> = {};
  for (const [name, property] of Object.entries((schema as TObject).properties)) {
    const member = (value as Record<string, unknown>)[name];
    if (member !== undefined) out[name] = inSchemaOrder(property, member);
  }
  return out;
}

/** The payload object the parts stand for: the allowed head, the parts, each policy with its key. */
function payloadOf(parts: PayloadParts): Record<string, unknown> {
  return {
    ...parts,
    v: 1,
    outcome: 'allowed',
    policies: parts.policies.map(({ policy: p, key }) => ({ ...p, key })),
  };
}

function reference(parts: PayloadParts): string {
  return JSON.stringify(inSchemaOrder(OutboxPayloadV1, payloadOf(parts)));
}

/** The schema closed at every level: a property it does not declare fails validation. */
function closed(schema: TSchema): TSchema {
  if (schema.type === 'array') return { ...schema, items: closed(schema.items as TSchema) };
  if (schema.type !== 'object' || schema.properties === undefined) return schema;
  const properties = Object.fromEntries(
    Object.entries((schema as TObject).properties).map(([name, p]) => [name, closed(p)]),
  );
  return { ...schema, properties, additionalProperties: false };
}
const validate = new Ajv({ strict: false }).compile(
  closed(JSON.parse(JSON.stringify(OutboxPayloadV1)) as TSchema),
);

const api = policy('api', 'enforce');
const trial = policy('trial', 'shadow');

const full: PayloadParts = {
  id: '01JDTESTDECISION0000000000',
  policy_set_version: 'v-test',
  tenant: 'acme',
  selectors: { tenant: 'acme', principal: 'svc-42' },
  attributes: { plan: 'pro', region: 'eu' },
  cost: 3,
  idempotency_key: 'b-77',
  policies: [
    { policy: api, key: 'svc-42' },
    { policy: trial, key: 'acme' },
  ],
  traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
};

const cases: [string, PayloadParts][] = [
  ['tenant, idempotency key and two policies', full],
  [
    'no tenant, no idempotency key, no policy',
    {
      id: '01JDTESTDECISION0000000001',
      policy_set_version: 'v2',
      tenant: undefined,
      selectors: {},
      attributes: {},
      cost: 0,
      idempotency_key: undefined,
      policies: [],
    },
  ],
  [
    'values that JSON must escape',
    {
      id: 'id"\\',
      policy_set_version: 'v\u2028',
      tenant: 'a"c\\me',
      selectors: { tenant: 'a"c\\me', principal: 'é😀\u2029' },
      attributes: { ['__proto__']: 'x"y' },
      cost: 9007199254740991,
      idempotency_key: 'k"\n',
      policies: [{ policy: api, key: 'é😀%3A"' }],
    },
  ],
];

/** The property names of every object in the JSON, in document order, with their paths. */
function keysOf(value: unknown, path = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => keysOf(item, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...keysOf(v, `${path}.${k}`)]);
}

describe(payloadJson.name, () => {
  it.each(cases)('writes what the schema describes, byte for byte: %s', (_name, parts) => {
    expect(payloadJson(parts)).toBe(reference(parts));
  });

  it('writes every property of the schema, in its order, and nothing else (the engine policy holds more)', () => {
    // given a payload with every optional property the allowed encoder writes
    const sut = JSON.parse(payloadJson(full)) as object;
    // then its top-level names are the schema's, in order (the head's denial/degraded fields aside)
    const names = Object.keys(OutboxPayloadV1.properties).filter(
      (n) => n !== 'reason' && n !== 'degraded_cause',
    );
    expect(Object.keys(sut)).toEqual(names);
    expect(Object.keys((sut as { policies: object[] }).policies[0])).toEqual([
      'name',
      'mode',
      'key',
      'windows',
    ]);
    expect(validate(sut)).toBe(true);
  });

  it('opens with PAYLOAD_PREFIX, and the denied and degraded heads keep the schema order', () => {
    const allowed = payloadJson(full);
    const rest = allowed.slice(PAYLOAD_PREFIX.length);
    const denied = JSON.parse(`${deniedPayloadPrefix('blocked')}${rest}`) as object;
    const degraded = JSON.parse(degradedPayload(allowed, 'backend_timeout')) as object;
    for (const payload of [denied, degraded]) {
      expect(keysOf(payload)).toEqual(keysOf(inSchemaOrder(OutboxPayloadV1, payload)));
      expect(validate(payload)).toBe(true);
    }
  });

  it("writes a sampled decision's traceparent as the last field, and no byte of it otherwise", () => {
    // given a payload without a trace context (the full one has it)
    const { traceparent: _, ...parts } = full;
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const traced = payloadJson({ ...parts, traceparent });
    expect(traced).toBe(reference({ ...parts, traceparent }));
    expect(traced.endsWith(`],"traceparent":"${traceparent}"}`)).toBe(true);
    expect(payloadJson({ ...parts, traceparent: undefined })).toBe(payloadJson(parts));
    expect(payloadJson(parts)).not.toContain('traceparent');
  });

  it('stays identical when the same policy objects are reused (cached fixed parts)', () => {
    const first = payloadJson(full);
    const again = payloadJson({ ...full, policies: [{ policy: api, key: 'other' }] });
    expect(first).toBe(reference(full));
    expect(again).toBe(reference({ ...full, policies: [{ policy: api, key: 'other' }] }));
  });

  it('refuses parts that lack a required property rather than write less than the contract', () => {
    const { cost: _cost, ...lacking } = full;
    expect(() => payloadJson(lacking as PayloadParts)).toThrow('outbox payload lacks cost');
  });
});

describe(schemaJson.name, () => {
  it('follows a schema it is given, so a field added to the schema is written in its place', () => {
    // given the payload schema with one more field between `attributes` and `cost`
    const entries = Object.entries(OutboxPayloadV1.properties);
    const at = entries.findIndex(([name]) => name === 'cost');
    const grown = Type.Object(
      Object.fromEntries([...entries.slice(0, at), ['region', Type.String()], ...entries.slice(at)]),
    );
    const value = { ...payloadOf(full), region: 'eu-west' };
    // then the field is written where the schema puts it, and only the schema's fields are
    expect(schemaJson(grown, value)).toBe(JSON.stringify(inSchemaOrder(grown, value)));
    expect(schemaJson(grown, value)).toContain(
      '"attributes":{"plan":"pro","region":"eu"},"region":"eu-west","cost":3',
    );
  });
});
