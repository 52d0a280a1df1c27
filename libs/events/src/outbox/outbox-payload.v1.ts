import { Type, type Static } from '@sinclair/typebox';
import { DENY_REASONS } from '../deny-reasons';
import {
  commonData,
  degradedCause,
  idempotencyKey,
  OneOf,
  PolicyOutcomeV1,
  SafeInteger,
  Text,
  WindowStateV1,
} from '../event-parts.v1';
import { DECISION_OUTCOMES } from '../event-types';

/**
 * The outbox payload (field `p` of an outbox entry), defined once, from the events' own field
 * schemas: the fields the events carry (`commonData`, the idempotency key, the degraded cause, each
 * policy's name, mode, key and each window's static facts) are the events' schemas themselves, so a
 * field added to `commonData` is in the payload type, in the bytes `payloadJson` writes and in the
 * events the builders make, with no other edit than the plan that supplies its value.
 *
 * Property order is wire order: `payloadJson` writes the properties as listed here (the spec holds
 * the bytes to this list). The head (`v`, `outcome`, `reason`?, `degraded_cause`?) comes first
 * because decide.lua and the degraded ledger swap it (payload-prefix.ts) without re-encoding the rest.
 */

/** Static facts of one window, known before the script runs: the event window's first three fields. */
export const OutboxWindowV1 = Type.Object(
  {
    name: WindowStateV1.properties.name,
    role: WindowStateV1.properties.role,
    limit: WindowStateV1.properties.limit,
  },
  { description: 'Static facts of one window; `r` carries one result per window in this order.' },
);

/** One applicable policy of a decision, as the events' policies without the script's results. */
export const OutboxPolicyV1 = Type.Object(
  {
    name: PolicyOutcomeV1.properties.name,
    mode: PolicyOutcomeV1.properties.mode,
    key: PolicyOutcomeV1.properties.key,
    windows: Type.Array(OutboxWindowV1, { description: "The policy's windows in declaration order." }),
  },
  { description: 'One applicable policy of a decision.' },
);

export const OutboxPayloadV1 = Type.Object(
  {
    v: Type.Literal(1, { description: 'Payload format version; a relay refuses versions it does not know.' }),
    outcome: OneOf(
      DECISION_OUTCOMES,
      'Outcome as known when the entry is written; allowed entries say `allowed`.',
    ),
    reason: Type.Optional(OneOf(DENY_REASONS, 'Deny reason, only with `denied`.')),
    degraded_cause: degradedCause,
    id: Text('Decision id (ULID); becomes the CloudEvents `id`, so relay retries deduplicate downstream.'),
    ...commonData,
    cost: SafeInteger(0, 'Units the caller asked to spend.'),
    idempotency_key: idempotencyKey,
    policies: Type.Array(OutboxPolicyV1, {
      description: 'Every applicable policy in evaluation order; the first one names the event `subject`.',
    }),
    traceparent: Type.Optional(
      Text(
        "W3C `traceparent` of the decision's span, only when that span was sampled (tracing on): the relay's span for the record is its child, and the record carries it on.",
      ),
    ),
  },
  {
    title: 'outbox payload v1',
    description: 'What the decision API hands the decision script for the outbox stream (field `p`).',
  },
);

/** The static type, read-only at every level: writers build a payload once, readers never edit it. */
type ReadonlyDeep<T> = T extends readonly (infer I)[]
  ? readonly ReadonlyDeep<I>[]
  : T extends object
    ? { readonly [K in keyof T]: ReadonlyDeep<T[K]> }
    : T;

/** One applicable policy of a decision (see `OutboxPolicyV1`). */
export type OutboxPolicy = ReadonlyDeep<Static<typeof OutboxPolicyV1>>;
/** Static facts of one window (see `OutboxWindowV1`). */
export type OutboxWindow = ReadonlyDeep<Static<typeof OutboxWindowV1>>;
/**
 * What the decision API hands the Lua script for the outbox stream (`tally:v1:{s<N>}:outbox`), field
 * `p`, built in TypeScript before the script runs. The script appends it unchanged for every allowed
 * decision, next to `t` (Redis time, ms) and `r` (per-window results). The relay turns the entry into
 * events with the builders of this lib, so this is the contract between engine and ledger. Every
 * field is documented in `OutboxPayloadV1`.
 */
export type OutboxPayload = ReadonlyDeep<Static<typeof OutboxPayloadV1>>;
