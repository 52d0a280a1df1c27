import { Type, type Static } from '@sinclair/typebox';
import { cloudEventV1 } from './cloud-event.v1';
import { commonData, OneOf, SafeInteger, Text } from './event-parts.v1';
import { LEASE_EVENT_TYPE } from './event-types';

/** One concurrency window a lease held. */
export const LeaseWindowV1 = Type.Object(
  {
    policy: Text('Policy name.'),
    window: Text('Window name (a `concurrency` window).'),
    key: Type.String({ description: "The policy's composite key value (token dims hashed)." }),
    limit: Type.Integer({ minimum: 1, description: 'The window limit when the lease was taken.' }),
  },
  { description: 'One concurrency window a lease held.' },
);

/**
 * A lease given back before its expiry: its units are free again in every window it held. Not usage:
 * the acquisition was the decision (and its `tally.usage.v1` event); billing ignores releases. A lease
 * that expires unreleased has no event (nothing observes the moment), its decision says `expires_at`.
 */
export const LeaseDataV1 = Type.Object(
  {
    policy_set_version: commonData.policy_set_version,
    tenant: commonData.tenant,
    selectors: commonData.selectors,
    lease_id: Text('`s<shard>-<decision id>`, as the decision answered it.'),
    decision_id: Text('The decision (ULID) that took the lease.'),
    units: SafeInteger(1, 'Units the lease held in each of its windows (the decision’s cost).'),
    outcome: OneOf(['released'], '`released`: given back by `POST /v1/leases/{id}:release`.'),
    windows: Type.Array(LeaseWindowV1, { description: 'The concurrency windows the lease held.' }),
  },
  { title: 'tally.lease.v1 data', description: 'A lease given back before its expiry.' },
);
export type LeaseDataV1 = Static<typeof LeaseDataV1>;

/** `tally.lease.v1`: one release. `id` is the decision id (a lease is released at most once). */
export const LeaseEventV1 = cloudEventV1(LEASE_EVENT_TYPE, LeaseDataV1);
export type LeaseEventV1 = Static<typeof LeaseEventV1>;
