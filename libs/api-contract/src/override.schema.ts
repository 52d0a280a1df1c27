import { Type, type Static } from '@sinclair/typebox';

/**
 * The admin API of runtime overrides (`/v1/overrides`, decision API): one policy's window limits
 * changed for one key, at runtime (docs/semantics.md, "Overrides"). Roles `overrides:read` /
 * `overrides:write` (admin holds both).
 */

const Limits = Type.Record(
  Type.String({ pattern: '^[a-z0-9][a-z0-9_.-]{0,63}$' }),
  Type.Integer({ minimum: 0 }),
  {
    description: 'Window name → limit (units per period; token bucket: capacity). 0 blocks the key.',
  },
);

/** `PUT /v1/overrides/{policy}/{key}` body. */
export const OverridePutSchema = Type.Object(
  {
    limits: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Window name → limit, an integer ≥ 0, for some or all windows of the policy (others keep the ' +
        "policy's). 0 blocks the key: every decision for it is denied with reason `blocked`.",
    }),
    expires_at: Type.Optional(
      Type.String({ description: 'RFC 3339 date-time in the future; absent: until removed.' }),
    ),
    reason: Type.String({ description: 'Why (1..500 characters); recorded with the change.' }),
  },
  { $id: 'OverridePut', additionalProperties: false },
);
export type OverridePut = Static<typeof OverridePutSchema>;

/** One override as stored. */
export const OverrideItemSchema = Type.Object(
  {
    policy: Type.String(),
    key: Type.String({
      description: 'The policy key value, as the engine builds it (`-` for a policy without key dims).',
    }),
    tenant: Type.Union([Type.String(), Type.Null()], {
      description: 'The tenant whose counters it changes.',
    }),
    limits: Limits,
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reason: Type.String(),
    set_by: Type.String({ description: 'Name of the token that set it (never the token).' }),
    version: Type.Integer({
      minimum: 1,
      description: "Increases with every change of the shard's overrides; decisions name it.",
    }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'OverrideItem', additionalProperties: false },
);
export type OverrideItem = Static<typeof OverrideItemSchema>;

/** `GET /v1/overrides`: one page. */
export const OverrideListSchema = Type.Object(
  {
    items: Type.Array(OverrideItemSchema),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `cursor` for the next page; `null` when the listing is complete.',
    }),
  },
  { $id: 'OverrideList', additionalProperties: false },
);
export type OverrideList = Static<typeof OverrideListSchema>;

/** `GET /v1/overrides` query parameters (strings, as received). */
export const OverrideListQuerySchema = Type.Object(
  {
    policy: Type.Optional(Type.String({ description: 'Only this policy.' })),
    tenant: Type.Optional(Type.String({ description: 'Only this tenant (reads its shard alone).' })),
    cursor: Type.Optional(Type.String({ description: '`next_cursor` of the previous page, verbatim.' })),
    limit: Type.Optional(
      Type.String({ pattern: '^\\d{1,4}$', description: 'Items per page, 1..1000 (default 100).' }),
    ),
  },
  { $id: 'OverrideListQuery', additionalProperties: false },
);
export type OverrideListQuery = Static<typeof OverrideListQuerySchema>;

/** `GET|PUT|DELETE /v1/overrides/{policy}/{key}` query: the tenant, for a policy without `tenant` in its key. */
export const OverrideTargetQuerySchema = Type.Object(
  {
    tenant: Type.Optional(
      Type.String({
        description: "Required when the policy's key has no `tenant` dim; else it must match the key's.",
      }),
    ),
  },
  { $id: 'OverrideTargetQuery', additionalProperties: false },
);
export type OverrideTargetQuery = Static<typeof OverrideTargetQuerySchema>;
