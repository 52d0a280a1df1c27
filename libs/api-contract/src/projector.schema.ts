import { Type, type Static } from '@sinclair/typebox';

/*
 * The projector's query API (`GET /v1/usage`, `/v1/top-keys`, `/v1/audit`): its query parameters and
 * response bodies, defined once. The `$id`s carry a `Projector` prefix so they never collide with the
 * decision API's components. The transport still validates with its class-validator DTOs (the
 * projector app holds them equal to these schemas in a unit test), and the lib's parsers check ranges,
 * instants and cursors, listing every problem.
 */

const GRANULARITY = ['minute', 'hour', 'day', 'month'] as const;
const Granularity = Type.Union(
  GRANULARITY.map((g) => Type.Literal(g)),
  { description: 'Bucket size.' },
);
const Instant = (description: string) =>
  Type.String({ description: `ISO 8601 instant with a zone (\`2026-11-30T09:00:00Z\`); ${description}` });
const Tenant = (description: string) => Type.String({ minLength: 1, maxLength: 256, description });
const PolicyName = (description: string) =>
  Type.String({ pattern: '^(?:_unmatched|[a-z0-9][a-z0-9_.-]{0,63})$', description });
const Namespace = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,62}$',
  description: 'A projection namespace other than the active one (comparing a replay).',
});
const Cursor = Type.String({ description: '`next_cursor` of the previous page, verbatim.' });
const Limit = (description: string) => Type.String({ pattern: '^\\d{1,6}$', description });
const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass as `cursor` for the next page; `null` on the last page.',
});

/** `GET /v1/usage` query parameters (strings, as received). */
export const UsageQuerySchema = Type.Object(
  {
    tenant: Tenant('The tenant selector value.'),
    policy: Type.Optional(PolicyName('One policy; absent: every policy (total counts each decision once).')),
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'One policy key of `policy` (raw, as the policy built it); needs `policy`.',
      }),
    ),
    granularity: Type.Optional(
      Type.Union(Granularity.anyOf, { description: 'Bucket size; default `hour`.' }),
    ),
    from: Type.Optional(Instant('default: a granularity-dependent window before `to`.')),
    to: Type.Optional(Instant('exclusive; default: now (the current bucket included).')),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit('Bucket starts per page (1..5000, default 500).')),
    namespace: Type.Optional(Namespace),
  },
  { $id: 'ProjectorUsageQuery', additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuerySchema>;

/** `GET /v1/top-keys` query parameters (strings, as received). */
export const TopKeysQuerySchema = Type.Object(
  {
    tenant: Tenant('The tenant selector value.'),
    policy: PolicyName('The policy whose keys are ranked: per-key usage is kept per policy.'),
    granularity: Type.Optional(
      Type.Union(Granularity.anyOf, { description: 'Size of the one bucket read; default `day`.' }),
    ),
    at: Type.Optional(Instant('inside the bucket; default: now (the current bucket).')),
    limit: Type.Optional(Limit('Keys listed (1..1000, default 10).')),
    namespace: Type.Optional(Namespace),
  },
  { $id: 'ProjectorTopKeysQuery', additionalProperties: false },
);
export type TopKeysQueryParams = Static<typeof TopKeysQuerySchema>;

/** `GET /v1/audit` query parameters (strings, as received). */
export const AuditQuerySchema = Type.Object(
  {
    tenant: Type.Optional(
      Tenant('Absent: the trail of tenant-less requests, which also holds policy reloads.'),
    ),
    since: Type.Optional(Instant('default: 24 hours ago. Entries come oldest first.')),
    limit: Type.Optional(Limit('Entries per page (1..1000, default 100).')),
    cursor: Type.Optional(Cursor),
    namespace: Type.Optional(Namespace),
  },
  { $id: 'ProjectorAuditQuery', additionalProperties: false },
);
export type AuditQuery = Static<typeof AuditQuerySchema>;

/** Units spent and decisions counted. */
export const ProjectorTotalsSchema = Type.Object(
  {
    cost: Type.Integer({ minimum: 0, description: 'Units spent.' }),
    count: Type.Integer({ minimum: 0, description: 'Decisions counted.' }),
  },
  { $id: 'ProjectorTotals', additionalProperties: false },
);

/** `GET /v1/usage`: one page of buckets and the total of the whole range. */
export const UsageResponseSchema = Type.Object(
  {
    tenant: Type.String(),
    granularity: Granularity,
    key: Type.Optional(Type.String({ description: 'The policy key asked for, echoed.' })),
    buckets: Type.Array(
      Type.Object(
        {
          start: Type.String({ description: 'Bucket start, `2026-11-30T09:00:00Z`.' }),
          policy: Type.String({ description: '`_all` when the query named no policy (each decision once).' }),
          cost: Type.Integer({ minimum: 0 }),
          count: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
    ),
    /** The whole range, not just this page; without a policy, each decision counted once. */
    total: ProjectorTotalsSchema,
    next_cursor: NextCursor,
  },
  { $id: 'ProjectorUsage', additionalProperties: false },
);
export type UsageResponse = Static<typeof UsageResponseSchema>;

/** `GET /v1/top-keys`: the heaviest keys of one bucket. */
export const TopKeysResponseSchema = Type.Object(
  {
    tenant: Type.String(),
    policy: Type.String(),
    granularity: Granularity,
    start: Type.String({ description: 'Bucket start, `2026-11-30T00:00:00Z`.' }),
    keys: Type.Array(
      Type.Object(
        {
          key: Type.String({ description: 'The policy key (raw, not encoded).' }),
          cost: Type.Integer({ minimum: 0 }),
          count: Type.Integer({ minimum: 0 }),
        },
        { additionalProperties: false },
      ),
      { description: 'At most `limit` keys, heaviest first (cost, then count, then key).' },
    ),
    distinct_keys: Type.Integer({ minimum: 0, description: 'Keys with usage in the bucket, listed or not.' }),
  },
  { $id: 'ProjectorTopKeys', additionalProperties: false },
);
export type TopKeysResponse = Static<typeof TopKeysResponseSchema>;

/** `GET /v1/audit`: one page of the audit trail, oldest first. */
export const AuditResponseSchema = Type.Object(
  {
    entries: Type.Array(
      Type.Object(
        {
          time: Type.String(),
          type: Type.Union([
            Type.Literal('denied'),
            Type.Literal('degraded'),
            Type.Literal('would_deny'),
            Type.Literal('policy_reload'),
          ]),
          policy: Type.Optional(Type.String()),
          reason: Type.Optional(
            Type.String({
              description:
                'Deny reason, degraded cause, would-deny reason; for `policy_reload`, the new policy-set version.',
            }),
          ),
          count: Type.Integer({ minimum: 0 }),
          selectors: Type.Record(Type.String(), Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
    next_cursor: NextCursor,
  },
  { $id: 'ProjectorAudit', additionalProperties: false },
);
export type AuditResponse = Static<typeof AuditResponseSchema>;
