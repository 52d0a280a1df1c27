import { Type, type Static } from '@sinclair/typebox';
import { cloudEventV1 } from './cloud-event.v1';
import { OneOf, Opt, SafeInteger, Text } from './event-parts.v1';
import { OVERRIDE_EVENT_TYPE } from './event-types';

/** An override as it stood on one side of a change. */
export const OverrideStateV1 = Type.Object(
  {
    version: SafeInteger(1, 'Shard-wide version of the change that wrote it.'),
    limits: Type.Unsafe<Record<string, number>>({
      type: 'object',
      additionalProperties: { type: 'integer', minimum: 0 },
      description: 'Window name → limit (0 blocks the key); windows not named keep the policy’s limit.',
    }),
    expires_at: Opt(
      Type.String({ format: 'date-time', description: 'When it ends on its own; absent: until removed.' }),
    ),
    reason: Type.String({ description: 'Why it was set, in the operator’s words.' }),
    set_by: Type.String({ description: 'NAME of the token that set it (never the token).' }),
    updated_at: Type.String({ format: 'date-time', description: 'Redis time of the change that wrote it.' }),
  },
  { description: 'A runtime override of one policy for one key.' },
);
export type OverrideStateV1 = Static<typeof OverrideStateV1>;

/**
 * One change of a runtime override (docs/semantics.md, "Overrides"), appended to the outbox by the
 * change's own script: the history of limits, replayable from the ledger.
 */
export const OverrideDataV1 = Type.Object(
  {
    policy: Text('Policy name.'),
    key: Type.String({
      description: "The policy's key value (dims percent-encoded; '' for a policy without key dims).",
    }),
    tenant: Opt(Text('The tenant whose counters it changes; absent: requests without a tenant.')),
    action: OneOf(['set', 'remove'], '`set` (new or replaced) or `remove`.'),
    before: Opt(OverrideStateV1),
    after: Opt(OverrideStateV1),
    set_by: Type.String({ description: 'NAME of the token that made the change (never the token).' }),
    reason: Type.String({ description: 'Why, in the operator’s words; `""` when none was given.' }),
    version: SafeInteger(1, 'Shard-wide version this change took (versions only grow).'),
  },
  {
    title: 'tally.override.v1 data',
    description:
      'A change of a runtime override: `before` absent = there was none, `after` absent = removed.',
  },
);
export type OverrideDataV1 = Static<typeof OverrideDataV1>;

/** `tally.override.v1`: one change; `id` is the change's ULID, `time` the Redis time of the change. */
export const OverrideEventV1 = cloudEventV1(OVERRIDE_EVENT_TYPE, OverrideDataV1);
export type OverrideEventV1 = Static<typeof OverrideEventV1>;
