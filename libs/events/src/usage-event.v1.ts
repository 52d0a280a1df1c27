import { Type, type Static } from '@sinclair/typebox';
import { cloudEventV1 } from './cloud-event.v1';
import { commonData, degradedCause, idempotencyKey, OneOf, policies, SafeInteger } from './event-parts.v1';
import { USAGE_EVENT_TYPE } from './event-types';

/**
 * What an allowed decision spent. Billing sums `cost` of these events; nothing else is the ledger.
 * `degraded` decisions (allowed under fail_open) are included: the caller did spend the units even
 * though Redis could not count them.
 */
export const UsageDataV1 = Type.Object(
  {
    ...commonData,
    cost: SafeInteger(
      1,
      'Units spent; a usage event always spends something. At most 2^53 − 1 (the decision API’s ceiling keeps it far below).',
    ),
    outcome: OneOf(
      ['allowed', 'degraded'],
      '`allowed`, or `degraded` when allowed under fail_open without counting.',
    ),
    degraded_cause: degradedCause,
    idempotency_key: idempotencyKey,
    policies,
  },
  {
    title: 'tally.usage.v1 data',
    description: 'What an allowed (or degraded) decision with cost > 0 spent.',
  },
);
export type UsageDataV1 = Static<typeof UsageDataV1>;

/** `tally.usage.v1`: one allowed decision with cost > 0. */
export const UsageEventV1 = cloudEventV1(USAGE_EVENT_TYPE, UsageDataV1);
export type UsageEventV1 = Static<typeof UsageEventV1>;
