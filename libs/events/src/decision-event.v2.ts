import { Type, type Static } from '@sinclair/typebox';
import { cloudEventV1 } from './cloud-event.v1';
import { DENY_REASONS } from './deny-reasons';
import { commonData, idempotencyKey, OneOf, policies, SafeInteger } from './event-parts.v1';
import { DECISION_V2_EVENT_TYPE } from './event-types';

/**
 * A decision that has no usage record: today, `count` denials of one key in one second. Allowed and
 * degraded decisions are not here: their `tally.usage.v1` record carries every fact a decision record
 * would (docs/adr/0009-one-record-per-decision.md). The fields are those of a `tally.decision.v1`
 * denial, so a v2 record's `data` is also valid v1 `data`; `outcome` stays, always `denied`, so a
 * record still says what it is on its own.
 */
export const DecisionDataV2 = Type.Object(
  {
    ...commonData,
    cost: SafeInteger(0, 'Units asked for (a denial consumed none of them); at most 2^53 − 1.'),
    outcome: OneOf(['denied'], 'Always `denied`: allowed and degraded decisions are usage records.'),
    reason: OneOf(DENY_REASONS, 'Why it was denied: the role of the binding window, or `blocked`.'),
    idempotency_key: idempotencyKey,
    count: SafeInteger(1, 'How many denials of one key in one second this record stands for.'),
    policies,
  },
  {
    title: 'tally.decision.v2 data',
    description:
      'A decision that spent nothing and so has no usage record: the coalesced denials of one key in one second, and why.',
  },
);
export type DecisionDataV2 = Static<typeof DecisionDataV2>;

/** `tally.decision.v2`: the decisions without a usage record (quota denials). */
export const DecisionEventV2 = cloudEventV1(DECISION_V2_EVENT_TYPE, DecisionDataV2);
export type DecisionEventV2 = Static<typeof DecisionEventV2>;
