import { Type, type Static } from '@sinclair/typebox';
import { cloudEventV1 } from './cloud-event.v1';
import { DENY_REASONS } from './deny-reasons';
import { commonData, degradedCause, idempotencyKey, OneOf, policies, SafeInteger } from './event-parts.v1';
import { DECISION_EVENT_TYPE, DECISION_OUTCOMES } from './event-types';

/**
 * One decision (or `count` coalesced denials of one key in one second) and why it went that way.
 * `reason` is required exactly when the outcome is `denied` (the `if`/`then` below, which ajv
 * enforces); Tally writes it on denials only.
 */
export const DecisionDataV1 = Type.Object(
  {
    ...commonData,
    cost: SafeInteger(0, 'Units asked for (a denial consumed none of them); at most 2^53 − 1.'),
    outcome: OneOf(DECISION_OUTCOMES, '`allowed`, `denied` or `degraded`.'),
    reason: Type.Optional(OneOf(DENY_REASONS, 'Why it was denied; required when `outcome` is `denied`.')),
    degraded_cause: degradedCause,
    idempotency_key: idempotencyKey,
    count: SafeInteger(
      1,
      'How many decisions this event stands for: 1, or the coalesced denials of one key in one second.',
    ),
    policies,
  },
  {
    title: 'tally.decision.v1 data',
    description: 'One decision, or the coalesced denials of one key in one second, and why it went that way.',
    if: { properties: { outcome: { const: 'denied' } }, required: ['outcome'] },
    then: { required: ['reason'] },
  },
);
export type DecisionDataV1 = Static<typeof DecisionDataV1>;

/** `tally.decision.v1`: every decision, denials included. */
export const DecisionEventV1 = cloudEventV1(DECISION_EVENT_TYPE, DecisionDataV1);
export type DecisionEventV1 = Static<typeof DecisionEventV1>;
