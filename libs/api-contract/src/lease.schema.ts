import { Type, type Static } from '@sinclair/typebox';

/** `POST /v1/leases/{id}:release`: what became of the lease. */
export const LeaseReleaseSchema = Type.Object(
  {
    lease_id: Type.String({ description: 'The lease, as the decision answered it.' }),
    outcome: Type.Union(
      [Type.Literal('released'), Type.Literal('already_released'), Type.Literal('expired')],
      {
        description:
          '`released`: its units are free again now (a `tally.lease.v1` event records it). ' +
          '`already_released`: an earlier call released it; nothing changes (releasing is idempotent). ' +
          '`expired`: it ended before this call; its units had come back at `expires_at`.',
      },
    ),
    expires_at: Type.String({ format: 'date-time', description: 'The lease’s expiry as taken.' }),
    released_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was released (by this call or the earlier one); `null` when `expired`.',
    }),
  },
  { $id: 'LeaseRelease', additionalProperties: false },
);
export type LeaseReleaseBody = Static<typeof LeaseReleaseSchema>;
