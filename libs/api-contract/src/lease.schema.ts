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
    expires_at: Type.String({
      format: 'date-time',
      description: 'The lease’s expiry: as taken, or as its last extension set it.',
    }),
    released_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was released (by this call or the earlier one); `null` when `expired`.',
    }),
  },
  { $id: 'LeaseRelease', additionalProperties: false },
);
export type LeaseReleaseBody = Static<typeof LeaseReleaseSchema>;

/**
 * The longest TTL an extension may name in any case: the longest `lease_ttl` a policy can give
 * (periods run 1ms..31d). The bound that matters is the lease's own `lease_ttl` (`lease.ttl_too_long`).
 */
export const MAX_LEASE_TTL_MS = 31 * 86_400_000;

/** `POST /v1/leases/{id}:extend`: the body (optional: no body, or `{}`, asks for the longest TTL). */
export const LeaseExtendRequestSchema = Type.Object(
  {
    ttl_ms: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_LEASE_TTL_MS,
        description:
          'The lease then expires this long after now (Redis time). At most the shortest `lease_ttl` ' +
          'in force among its windows (above it: 400 `lease.ttl_too_long`); absent: that `lease_ttl`. ' +
          'An extension never shortens a lease.',
      }),
    ),
  },
  { $id: 'LeaseExtendRequest', additionalProperties: false },
);
export type LeaseExtendRequest = Static<typeof LeaseExtendRequestSchema>;

/** `POST /v1/leases/{id}:extend`: the lease's new expiry. */
export const LeaseExtendSchema = Type.Object(
  {
    lease_id: Type.String({ description: 'The lease, as the decision answered it.' }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'The new expiry (Redis time): the units stay held until then unless released.',
    }),
    ttl_ms: Type.Integer({ minimum: 0, description: 'Milliseconds from this call to `expires_at`.' }),
    max_ttl_ms: Type.Integer({
      minimum: 1,
      description: 'The longest `ttl_ms` an extension of this lease may ask for now (its `lease_ttl`).',
    }),
  },
  { $id: 'LeaseExtend', additionalProperties: false },
);
export type LeaseExtendBody = Static<typeof LeaseExtendSchema>;
