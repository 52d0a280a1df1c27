import { Type, type Static } from '@sinclair/typebox';

/** The most decisions one `POST /v1/decisions:batch` may carry. */
export const MAX_BATCH = 1000;

/**
 * `errorMessage` (read by the server's validator, see libs/http schema-validator.ts): the sentence a
 * caller reads for a failed rule, by keyword or for every keyword. Absent: a generic sentence.
 */
type Messages = { readonly errorMessage?: string | Readonly<Record<string, string>> };
const says = (errorMessage: Messages['errorMessage']): Messages => ({ errorMessage });

/**
 * `POST /v1/decisions` body (and each item of a batch). Shapes only: the engine normalizes and judges
 * values (selector names and values, cost against max_cost — 413 however large —, the idempotency
 * key's alphabet and length) and answers with the decision codes.
 */
export const DecisionRequestSchema = Type.Object(
  {
    selectors: Type.Record(Type.String(), Type.Unknown(), {
      description:
        '`tenant`, `principal`, `token`, `client`, `route` → string (1..256 bytes, no control characters). ' +
        'Other names or values are refused by the engine: 400 `selector.identity_invalid`.',
      ...says('selectors must be an object of strings'),
    }),
    attributes: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Free attributes for `match` / `unless`: `[a-z0-9_.-]{1,64}` → string.',
        ...says('attributes must be an object of strings'),
      }),
    ),
    cost: Type.Optional(
      Type.Integer({
        minimum: 0,
        default: 1,
        description: 'Units to spend; defaults to 1. 0 reports state without consuming.',
        ...says('cost must be a whole number ≥ 0'),
      }),
    ),
    idempotency_key: Type.Optional(
      Type.String({
        description:
          'Replays the stored decision for the same request; 409 for a different one. 1..255 printable ' +
          'ASCII characters (0x21–0x7E), judged by the engine (400 `idempotency_key.invalid`).',
        ...says('idempotency_key must be a string'),
      }),
    ),
  },
  { $id: 'DecisionRequest', additionalProperties: false, ...says({ type: 'must be an object' }) },
);
/** A decision request as sent: optional fields may be absent. */
export type DecisionRequestBody = Static<typeof DecisionRequestSchema>;

const REQUESTS_RULES = {
  minItems: 1,
  maxItems: MAX_BATCH,
  ...says({
    type: 'requests must be an array',
    minItems: 'requests must hold at least 1 decision',
    maxItems: `requests must hold at most ${MAX_BATCH} decisions`,
  }),
};

/** `POST /v1/decisions:batch` body: independent decisions, each answered on its own. */
export const BatchRequestSchema = Type.Object(
  { requests: Type.Array(DecisionRequestSchema, REQUESTS_RULES) },
  { $id: 'BatchRequest', additionalProperties: false },
);
export type BatchRequestBody = Static<typeof BatchRequestSchema>;

/**
 * The batch envelope as the server checks it first: `BatchRequestSchema` with its items left open.
 * Each item is then validated against `DecisionRequestSchema` on its own, so one bad item gets its own
 * 400 result instead of failing the decisions around it.
 */
export const BatchEnvelopeSchema = Type.Object(
  { requests: Type.Array(Type.Unknown(), REQUESTS_RULES) },
  { additionalProperties: false },
);
export type BatchEnvelope = Static<typeof BatchEnvelopeSchema>;
