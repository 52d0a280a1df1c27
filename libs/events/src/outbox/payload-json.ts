import {
  OutboxPayloadV1,
  OutboxPolicyV1,
  type OutboxPayload,
  type OutboxPolicy,
  type OutboxWindow,
} from './outbox-payload.v1';
import type { TSchema } from '@sinclair/typebox';
import { PAYLOAD_PREFIX } from './payload-prefix';
import { membersJson, propertiesOf, schemaJson, type SchemaProperty } from './schema-json';

/** The payload's head, written as `PAYLOAD_PREFIX` (and swapped by decide.lua and the degraded ledger). */
const HEAD = ['v', 'outcome', 'reason', 'degraded_cause'] as const;

/** What the encoder needs of a loaded policy (the engine passes its `Policy` objects, which hold more). */
export type PayloadPolicy = Omit<OutboxPolicy, 'key' | 'windows'> & {
  readonly windows: readonly OutboxWindow[];
};

/**
 * The payload's fields after its head, named as in `OutboxPayloadV1` (a field added there is a field
 * the plan must supply here), each applicable policy with its key for this request.
 */
export type PayloadParts = Omit<OutboxPayload, (typeof HEAD)[number] | 'policies'> & {
  readonly policies: readonly { readonly policy: PayloadPolicy; readonly key: string }[];
};

interface Field extends SchemaProperty {
  /** `,"name":` (the first property: without the comma) */
  readonly label: string;
  /** The value's JSON, chosen once from the property's schema (the hot path does no schema walk). */
  readonly encode: (value: unknown, parts: PayloadParts) => string;
  /** A string, number or flat record: written by `JSON.stringify` inline (the common case, kept cheap). */
  readonly plain: boolean;
}

/** The writer of a payload schema: its head is checked once, its other fields are written in its order. */
function fieldsAfterHead(properties: readonly SchemaProperty[]): Field[] {
  const head = properties.slice(0, HEAD.length).map((p) => p.name);
  if (head.join() !== HEAD.join()) {
    // The prefix swap of a denied or degraded payload relies on this head; a schema that moved it
    // would make decide.lua corrupt every denial sample.
    throw new Error(`the outbox payload must open with ${HEAD.join(', ')}; it opens with ${head.join(', ')}`);
  }
  const body = properties.slice(HEAD.length);
  // The first property after the head is required (the decision id), so every later one can carry
  // its leading comma in its label: no separator bookkeeping per decision.
  if (body[0]?.optional !== false)
    throw new Error('the outbox payload body must open with a required property');
  return body.map((p, i) => ({
    ...p,
    label: `${i === 0 ? '' : ','}${JSON.stringify(p.name)}:`,
    encode: p.name === 'policies' ? (_value, parts) => policiesJson(parts.policies) : encoderOf(p.schema),
    plain: p.name !== 'policies' && !isNested(p.schema),
  }));
}

function isNested(schema: TSchema): boolean {
  return schema.type === 'array' || typeof schema.properties === 'object';
}

/** Plain values are what `JSON.stringify` writes; a nested object schema is written in its own order. */
function encoderOf(schema: TSchema): (value: unknown) => string {
  return isNested(schema) ? (value) => schemaJson(schema, value) : (value) => JSON.stringify(value);
}

const FIELDS = fieldsAfterHead(propertiesOf(OutboxPayloadV1));

interface PolicyJson {
  /** `{"name":…,"mode":…,"key":` */
  readonly head: string;
  /** `,"windows":[…]}` */
  readonly tail: string;
}

const POLICY_PROPERTIES = propertiesOf(OutboxPolicyV1);
const KEY_AT = POLICY_PROPERTIES.findIndex((p) => p.name === 'key');
const policyJsonCache = new WeakMap<PayloadPolicy, PolicyJson>();

/**
 * Each policy's fixed part (every property but its key) is written once per loaded policy object,
 * not once per decision: a new policy set brings new objects, so the cache can never outlive the
 * rules it describes.
 */
function policyJsonOf(policy: PayloadPolicy): PolicyJson {
  let cached = policyJsonCache.get(policy);
  if (!cached) {
    const value = policy as unknown as Record<string, unknown>;
    const before = membersJson(POLICY_PROPERTIES.slice(0, KEY_AT), value);
    const after = membersJson(POLICY_PROPERTIES.slice(KEY_AT + 1), value);
    cached = {
      head: `{${before}${before === '' ? '' : ','}"key":`,
      tail: `${after === '' ? '' : ','}${after}}`,
    };
    policyJsonCache.set(policy, cached);
  }
  return cached;
}

function policiesJson(policies: PayloadParts['policies']): string {
  let json = '[';
  for (let i = 0; i < policies.length; i++) {
    const { policy, key } = policies[i];
    const fixed = policyJsonOf(policy);
    json += `${i === 0 ? '' : ','}${fixed.head}${JSON.stringify(key)}${fixed.tail}`;
  }
  return `${json}]`;
}

/**
 * The outbox payload of an allowed decision (`OutboxPayload`, decoded by `decodeOutboxEntry`) as
 * JSON, built as text: `PAYLOAD_PREFIX`, then every other property of `OutboxPayloadV1` in the
 * schema's order, absent optional ones omitted — byte for byte what `JSON.stringify` gives for the
 * payload object built in that order (payload-json.spec.ts holds it to the schema).
 */
export function payloadJson(parts: PayloadParts): string {
  const values = parts as unknown as Record<string, unknown>;
  let json = PAYLOAD_PREFIX;
  for (const field of FIELDS) {
    const value = values[field.name];
    if (value === undefined) {
      if (field.optional) continue;
      throw new Error(`outbox payload lacks ${field.name}`);
    }
    json += field.label + (field.plain ? JSON.stringify(value) : field.encode(value, parts));
  }
  return `${json}}`;
}
