import { PAYLOAD_PREFIX } from './payload-prefix';

/** What the encoder needs of a loaded policy (the engine passes its `Policy` objects). */
export interface PayloadPolicy {
  readonly name: string;
  readonly mode: 'enforce' | 'shadow';
  readonly windows: readonly {
    readonly name: string;
    readonly role: 'burst' | 'sustained';
    readonly limit: number;
  }[];
}

/**
 * The encoder of the outbox payload (`OutboxPayload`, decoded by `decodeOutboxEntry`) as JSON, built as text: byte for byte what `JSON.stringify`
 * gives for the object with fields in contract order (`v`, `outcome`, `id`, `policy_set_version`,
 * `tenant`?, `selectors`, `attributes`, `cost`, `idempotency_key`?, `policies`, `traceparent`?). Each policy's fixed
 * part (name, mode, windows) is stringified once per loaded policy object, not once per decision:
 * a new policy set brings new objects, so the cache can never outlive the rules it describes.
 */
export interface PayloadParts {
  readonly id: string;
  readonly policySetVersion: string;
  readonly tenant: string | undefined;
  readonly selectors: Readonly<Record<string, string>>;
  readonly attributes: Readonly<Record<string, string>>;
  readonly cost: number;
  readonly idempotencyKey: string | undefined;
  readonly policies: readonly { readonly policy: PayloadPolicy; readonly key: string }[];
  /** The decision's span when it was sampled: the last field, absent (no byte) otherwise. */
  readonly traceparent?: string;
}

interface PolicyJson {
  /** `{"name":…,"mode":…,"key":` */
  readonly head: string;
  /** `,"windows":[…]}` */
  readonly tail: string;
}

const policyJsonCache = new WeakMap<PayloadPolicy, PolicyJson>();

function policyJsonOf(policy: PayloadPolicy): PolicyJson {
  let cached = policyJsonCache.get(policy);
  if (!cached) {
    const windows = policy.windows.map((w) => ({ name: w.name, role: w.role, limit: w.limit }));
    cached = {
      head: `{"name":${JSON.stringify(policy.name)},"mode":${JSON.stringify(policy.mode)},"key":`,
      tail: `,"windows":${JSON.stringify(windows)}}`,
    };
    policyJsonCache.set(policy, cached);
  }
  return cached;
}

export function payloadJson(parts: PayloadParts): string {
  let json = `${PAYLOAD_PREFIX}"id":${JSON.stringify(parts.id)},"policy_set_version":${JSON.stringify(parts.policySetVersion)}`;
  if (parts.tenant !== undefined) json += `,"tenant":${JSON.stringify(parts.tenant)}`;
  json += `,"selectors":${JSON.stringify(parts.selectors)},"attributes":${JSON.stringify(parts.attributes)},"cost":${JSON.stringify(parts.cost)}`;
  if (parts.idempotencyKey !== undefined)
    json += `,"idempotency_key":${JSON.stringify(parts.idempotencyKey)}`;
  json += ',"policies":[';
  for (let i = 0; i < parts.policies.length; i++) {
    const { policy, key } = parts.policies[i];
    const fixed = policyJsonOf(policy);
    json += `${i === 0 ? '' : ','}${fixed.head}${JSON.stringify(key)}${fixed.tail}`;
  }
  if (parts.traceparent === undefined) return `${json}]}`;
  return `${json}],"traceparent":${JSON.stringify(parts.traceparent)}}`;
}
