import { Type, type Static, type TSchema } from '@sinclair/typebox';

/**
 * The parts shared by both events' `data`, as TypeBox schemas: each is at once the JSON Schema the
 * consumers validate with (compiled by ajv, see event-validators.ts), the document published under
 * docs/contracts/, and (through `Static`) the TypeScript type. A field is added here and nowhere else.
 */

/** Crockford base32, 26 characters: a ULID (coalesced-denial ids are ULID-shaped too). */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** 2^53 − 1: the largest integer every consumer (JavaScript included) reads exactly. */
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A non-empty string (class-validator's IsNotEmpty, which this schema replaced). */
export const Text = (description: string) => Type.String({ minLength: 1, description });

/** An integer in [minimum, 2^53 − 1]. */
export const SafeInteger = (minimum: number, description: string) =>
  Type.Integer({ minimum, maximum: MAX_SAFE, description });

/**
 * A flat JSON object of string values: selectors and attributes never nest. `additionalProperties`
 * rather than TypeBox's `Type.Record` (a `patternProperties` regex run on every key): the same rule,
 * checked without a regex on the projector's path.
 */
export const StringRecord = (description: string) =>
  Type.Unsafe<Record<string, string>>({
    type: 'object',
    additionalProperties: { type: 'string' },
    description,
  });

/** One of a fixed list of strings, as a JSON Schema `enum` (a union of literals would be an `anyOf`). */
export const OneOf = <const V extends readonly string[]>(values: V, description: string) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], description });

/** A field that may be absent; absent is written by omission, never as `null`. */
export const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);

/** The state of one window of one policy after the decision. */
export const WindowStateV1 = Type.Object(
  {
    name: Text('Window name, unique within its policy.'),
    role: OneOf(['burst', 'sustained'], '`burst` or `sustained`: which deny reason this window produces.'),
    limit: SafeInteger(1, 'Units per period (token bucket: capacity).'),
    remaining: Opt(
      SafeInteger(
        0,
        'Units left after the decision; for a coalesced denial those of its first denial; absent on degraded events (no script ran).',
      ),
    ),
    reset_ms: Opt(
      Type.Number({
        minimum: 0,
        description: 'Milliseconds until the window is back to its full limit; same presence as `remaining`.',
      }),
    ),
    would_deny: Opt(
      Type.Boolean({
        description:
          'True when this window could not afford the cost; on a shadow policy that is a would-deny. Same presence as `remaining`.',
      }),
    ),
    override_limit: Opt(
      SafeInteger(
        0,
        "The limit a runtime override set for this window, in force for this decision (`limit` stays the policy file's); 0 blocked the key.",
      ),
    ),
  },
  { description: 'The state of one window of one policy after the decision.' },
);
export type WindowStateV1 = Static<typeof WindowStateV1>;

/** One applicable policy of the decision, with its windows. */
export const PolicyOutcomeV1 = Type.Object(
  {
    name: Text('Policy name as in the policy file.'),
    mode: OneOf(
      ['enforce', 'shadow'],
      '`enforce` policies can deny; `shadow` ones only count and report `would_deny`.',
    ),
    key: Type.String({
      description: "The policy's composite key value for this request (token dims hashed).",
    }),
    override_version: Opt(
      SafeInteger(
        1,
        "Version of the runtime override of this policy and key in force for this decision (its windows' `override_limit`); absent: none.",
      ),
    ),
    windows: Type.Array(WindowStateV1, { description: "The policy's windows in declaration order." }),
  },
  { description: 'One applicable policy of the decision, with its windows.' },
);
export type PolicyOutcomeV1 = Static<typeof PolicyOutcomeV1>;

/** The `data` fields both event types share, in wire order (the builders write them in this order). */
export const commonData = {
  policy_set_version: Text('Content hash of the policy set that decided.'),
  tenant: Opt(Text('The `tenant` selector, when the request had one.')),
  selectors: StringRecord('Normalized selectors of the request; `token` is an HMAC, never the raw token.'),
  attributes: StringRecord(
    'Free request attributes: with `selectors` and `cost`, enough to re-evaluate the request under other policies.',
  ),
};

export const degradedCause = Opt(
  Type.String({ description: 'The backend failure behind a `degraded` outcome (e.g. `backend_timeout`).' }),
);
export const idempotencyKey = Opt(Type.String({ description: "The caller's idempotency key, when given." }));
export const policies = Type.Array(PolicyOutcomeV1, {
  description:
    'Every applicable policy in evaluation order, with its mode, key and windows; `[]` when none applied.',
});
