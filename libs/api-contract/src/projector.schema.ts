import { Type, type Static } from '@sinclair/typebox';

/*
 * The projector's query API (`GET /v1/usage`, `/v1/top-keys`, `/v1/audit`): its query parameters and
 * response bodies, defined once. The `$id`s carry a `Projector` prefix so they never collide with the
 * decision API's components. The projector validates each query string with its schema, compiled
 * (libs/http query-schema.pipe.ts); the lib's parsers then check ranges, instants and cursors,
 * listing every problem.
 *
 * `errorMessage` (read by the server's validator, dropped from the published documents): the sentence
 * a caller reads for a failed rule, by keyword or for every keyword. A repeated parameter arrives as
 * an array, which fails `type`.
 */
type Messages = { readonly errorMessage?: string | Readonly<Record<string, string>> };
const says = (errorMessage: Messages['errorMessage']): Messages => ({ errorMessage });

const GRANULARITY = ['minute', 'hour', 'day', 'month'] as const;
const Granularity = Type.Union(
  GRANULARITY.map((g) => Type.Literal(g)),
  { description: 'Bucket size.' },
);
const GranularityParam = (description: string) =>
  Type.Union(Granularity.anyOf, {
    description,
    ...says(`granularity must be one of ${GRANULARITY.join(', ')}`),
  });
const Instant = (name: string, description: string) =>
  Type.String({
    description: `ISO 8601 instant with a zone (\`2026-11-30T09:00:00Z\`); ${description}`,
    ...says(`${name} must be a string`),
  });
const TENANT_LENGTH = 'tenant must be 1 to 256 characters';
/** `type` says `required` for a required tenant: the sentence callers read today for both. */
const Tenant = (description: string, typeMessage: string) =>
  Type.String({
    minLength: 1,
    maxLength: 256,
    description,
    ...says({ type: typeMessage, minLength: TENANT_LENGTH, maxLength: TENANT_LENGTH }),
  });
const PolicyName = (description: string, typeMessage: string) =>
  Type.String({
    pattern: '^(?:_unmatched|[a-z0-9][a-z0-9_.-]{0,63})$',
    description,
    ...says({ type: typeMessage, pattern: 'policy must be a policy name' }),
  });
/** The projections' `POLICY_KEY` (libs/projections policy-key-param.ts; the projector's spec holds them equal). */
const MAX_POLICY_KEY = 2048;
const POLICY_KEY_MESSAGE = `key must be 1 to ${MAX_POLICY_KEY} characters without control characters`;
const Namespace = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,62}$',
  description: 'A projection namespace other than the active one (comparing a replay).',
  ...says('namespace must match [a-z0-9][a-z0-9_-]{0,62}'),
});
const Cursor = Type.String({
  description: '`next_cursor` of the previous page, verbatim.',
  ...says('cursor must be a string'),
});
/** Digits only: the range is the lib parser's (it lists every problem); `digits` bounds the text. */
const Limit = (max: number, digits: number, description: string) =>
  Type.String({
    pattern: `^\\d{1,${digits}}$`,
    description,
    ...says(`limit must be an integer from 1 to ${max}`),
  });
const NextCursor = Type.Union([Type.String(), Type.Null()], {
  description: 'Pass as `cursor` for the next page; `null` on the last page.',
});

/** `GET /v1/usage` query parameters (strings, as received). */
export const UsageQuerySchema = Type.Object(
  {
    tenant: Tenant('The tenant selector value.', 'tenant is required'),
    policy: Type.Optional(
      PolicyName(
        'One policy; absent: every policy (total counts each decision once).',
        'policy must be a string',
      ),
    ),
    key: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_POLICY_KEY,
        pattern: `^\\P{Cc}{1,${MAX_POLICY_KEY}}$`,
        description: 'One policy key of `policy` (raw, as the policy built it); needs `policy`.',
        ...says({
          type: 'key must be a string',
          minLength: POLICY_KEY_MESSAGE,
          maxLength: POLICY_KEY_MESSAGE,
          pattern: POLICY_KEY_MESSAGE,
        }),
      }),
    ),
    granularity: Type.Optional(GranularityParam('Bucket size; default `hour`.')),
    from: Type.Optional(Instant('from', 'default: a granularity-dependent window before `to`.')),
    to: Type.Optional(Instant('to', 'exclusive; default: now (the current bucket included).')),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(Limit(5000, 6, 'Bucket starts per page (1..5000, default 500).')),
    namespace: Type.Optional(Namespace),
  },
  { $id: 'ProjectorUsageQuery', additionalProperties: false },
);
export type UsageQuery = Static<typeof UsageQuerySchema>;

/** `GET /v1/top-keys` query parameters (strings, as received). */
export const TopKeysQuerySchema = Type.Object(
  {
    tenant: Tenant('The tenant selector value.', 'tenant is required'),
    policy: PolicyName(
      'The policy whose keys are ranked: per-key usage is kept per policy.',
      'policy is required',
    ),
    granularity: Type.Optional(GranularityParam('Size of the one bucket read; default `day`.')),
    at: Type.Optional(Instant('at', 'inside the bucket; default: now (the current bucket).')),
    limit: Type.Optional(Limit(1000, 6, 'Keys listed (1..1000, default 10).')),
    namespace: Type.Optional(Namespace),
  },
  { $id: 'ProjectorTopKeysQuery', additionalProperties: false },
);
export type TopKeysQueryParams = Static<typeof TopKeysQuerySchema>;

/** `GET /v1/audit` query parameters (strings, as received). */
/** The types of audit rows (`GET /v1/audit?type=`). */
const AuditType = Type.Union([
  Type.Literal('denied'),
  Type.Literal('degraded'),
  Type.Literal('would_deny'),
  Type.Literal('policy_reload'),
  Type.Literal('override'),
]);

export const AuditQuerySchema = Type.Object(
  {
    tenant: Type.Optional(
      Tenant(
        'Absent: the trail of tenant-less requests, which also holds policy reloads.',
        'tenant must be a string',
      ),
    ),
    since: Type.Optional(Instant('since', 'default: 24 hours ago. Entries come oldest first.')),
    limit: Type.Optional(Limit(1000, 5, 'Entries per page (1..1000, default 100).')),
    cursor: Type.Optional(Cursor),
    namespace: Type.Optional(Namespace),
    type: Type.Optional(AuditType),
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

/** An override as it stood before or after a change (the `tally.override.v1` event's shape). */
const AuditOverrideState = Type.Object(
  {
    version: Type.Integer({ minimum: 1 }),
    limits: Type.Record(Type.String(), Type.Integer({ minimum: 0 }), {
      description: 'Window name → limit; 0 blocks the key.',
    }),
    expires_at: Type.Optional(Type.String({ description: 'Absent: until removed.' })),
    reason: Type.String(),
    set_by: Type.String({ description: 'Name of the token that set it.' }),
    updated_at: Type.String(),
  },
  { additionalProperties: false },
);

/** `GET /v1/audit`: one page of the audit trail, oldest first. */
export const AuditResponseSchema = Type.Object(
  {
    entries: Type.Array(
      Type.Object(
        {
          time: Type.String(),
          type: AuditType,
          policy: Type.Optional(Type.String()),
          reason: Type.Optional(
            Type.String({
              description:
                'Deny reason, degraded cause, would-deny reason; for `policy_reload`, the new policy-set version; for `override`, why it was changed.',
            }),
          ),
          count: Type.Integer({ minimum: 0 }),
          selectors: Type.Record(Type.String(), Type.String()),
          override: Type.Optional(
            Type.Object(
              {
                action: Type.Union([Type.Literal('set'), Type.Literal('remove')]),
                key: Type.String({ description: "The policy's key value." }),
                version: Type.Integer({ minimum: 1, description: 'The version the change took.' }),
                set_by: Type.String({ description: 'Name of the token that made the change.' }),
                before: Type.Optional(AuditOverrideState),
                after: Type.Optional(AuditOverrideState),
              },
              {
                additionalProperties: false,
                description: '`override` rows: the change; `reason` is why. `before`/`after` absent: none.',
              },
            ),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    next_cursor: NextCursor,
  },
  { $id: 'ProjectorAudit', additionalProperties: false },
);
export type AuditResponse = Static<typeof AuditResponseSchema>;
