import { Type, type Static } from '@sinclair/typebox';

/** Why a decision was refused: the fixed deny-reason vocabulary (also the events' `reason`). */
export const DENY_REASONS = [
  'burst_quota_exhausted',
  'sustained_quota_exhausted',
  'selector_identity_missing',
  'selector_identity_invalid',
  'backend_timeout',
  'backend_unavailable',
  'backend_error',
  'blocked',
] as const;
export const DenyReasonSchema = Type.Union(
  DENY_REASONS.map((r) => Type.Literal(r)),
  { $id: 'DenyReason' },
);
export type DenyReason = Static<typeof DenyReasonSchema>;

/** The backend failures a degraded or fail_closed decision names. */
export const BackendFailureSchema = Type.Union([
  Type.Literal('backend_timeout'),
  Type.Literal('backend_unavailable'),
  Type.Literal('backend_error'),
]);
export type BackendFailure = Static<typeof BackendFailureSchema>;

/** Machine-readable codes a decision body carries; `null` when allowed. A subset of the error table. */
export const DECISION_CODES = [
  'quota.exceeded',
  'idempotency.conflict',
  'cost.too_large',
  'cost.invalid',
  'idempotency_key.invalid',
  'selector.identity_missing',
  'selector.identity_invalid',
  'backend.timeout',
  'backend.unavailable',
  'backend.error',
  'quota.blocked',
] as const;
export const DecisionCodeSchema = Type.Union(
  DECISION_CODES.map((c) => Type.Literal(c)),
  { $id: 'DecisionCode' },
);
export type DecisionCode = Static<typeof DecisionCodeSchema>;

/** One window of one applicable policy. */
export const DecisionWindowSchema = Type.Object(
  {
    name: Type.String({ description: 'Window name, unique within its policy.' }),
    role: Type.Union([Type.Literal('burst'), Type.Literal('sustained')], {
      description: 'Which deny reason this window produces.',
    }),
    limit: Type.Integer({ minimum: 0, description: 'Units per period (token bucket: capacity).' }),
    remaining: Type.Number({
      minimum: 0,
      description:
        'Units left after this decision (after the commit when allowed; untouched when denied). ' +
        "In a degraded decision: from the API process's own counters for a `local_fallback` policy " +
        '(left of its share of the limit), 0 for a blocked key, else unknown and reported as `limit`.',
    }),
    reset_ms: Type.Number({
      minimum: 0,
      description: 'Milliseconds until the window is back to its full limit (0 when nothing is counted).',
    }),
  },
  { $id: 'DecisionWindow', additionalProperties: false },
);
export type DecisionWindow = Static<typeof DecisionWindowSchema>;

/** One applicable policy of a decision, in evaluation (file) order. */
export const DecisionPolicySchema = Type.Object(
  {
    name: Type.String({ description: 'Policy name.' }),
    mode: Type.Union([Type.Literal('enforce'), Type.Literal('shadow')], {
      description: '`enforce` policies can deny; `shadow` policies count and report `would_deny`.',
    }),
    would_deny: Type.Optional(
      Type.Boolean({ description: 'Shadow policies only: enforcing this policy would have denied.' }),
    ),
    override: Type.Optional(
      Type.Object(
        {
          version: Type.Integer({
            minimum: 1,
            description: 'Version of the override (GET /v1/overrides/{policy}/{key}) that was in force.',
          }),
        },
        {
          additionalProperties: false,
          description:
            "A runtime override of this policy's limits for this key was in force: the windows show its limits.",
        },
      ),
    ),
    windows: Type.Array(DecisionWindowSchema, { description: 'The windows in declaration order.' }),
  },
  { $id: 'DecisionPolicy', additionalProperties: false },
);
export type DecisionPolicy = Static<typeof DecisionPolicySchema>;

/** The lease an allowed decision holds when a `concurrency` window applied (absent otherwise). */
export const LeaseSchema = Type.Object(
  {
    id: Type.String({
      description:
        'Lease id (`s<shard>-<decision id>`): give the units back with `POST /v1/leases/{id}:release`, keep them longer with `POST /v1/leases/{id}:extend`. A replay names the same lease, with its expiry as first answered.',
    }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the units return by themselves if the lease is not released (Redis time).',
    }),
    ttl_ms: Type.Integer({ minimum: 0, description: 'Milliseconds from the decision to `expires_at`.' }),
  },
  { $id: 'Lease', additionalProperties: false },
);
export type Lease = Static<typeof LeaseSchema>;

/** The fields of a decision body, reused where a decision sits beside its status (batch items). */
export const DECISION_BODY_PROPERTIES = {
  allowed: Type.Boolean({
    description: 'True when the caller may spend the cost now (also when degraded under fail_open).',
  }),
  decision_id: Type.String({
    description: 'ULID of this decision; a replay returns the original decision id. Equals the event id.',
  }),
  reason: Type.Union([DenyReasonSchema, Type.Null()], {
    description: 'Why it was refused; `null` when allowed, for 409/413 and for malformed values.',
  }),
  code: Type.Union([DecisionCodeSchema, Type.Null()], {
    description: 'Machine-readable code of a refusal; `null` when allowed.',
  }),
  retry_after_ms: Type.Number({
    minimum: 0,
    description: 'How long to wait (429: until the cost fits; 503: a back-off); 0 when allowed.',
  }),
  degraded: Type.Boolean({
    description:
      'True when the backend failed and the answer did not come from Redis: a fail_open policy let the request through uncounted, or a local_fallback policy decided it from the API process’s own counters (allowed, or denied with 429).',
  }),
  degraded_cause: Type.Optional(BackendFailureSchema),
  replayed: Type.Boolean({
    description: 'True when this is the stored decision of an earlier request with the same idempotency key.',
  }),
  policies: Type.Array(DecisionPolicySchema, {
    description: 'Every applicable policy; `[]` when none applies (allowed, counted as `unmatched`).',
  }),
  message: Type.Optional(
    Type.String({ description: 'Human-readable detail of a 400/409/413; never echoes a selector value.' }),
  ),
  lease: Type.Optional(LeaseSchema),
};

/** The answer to one decision request: allowed, denied (429), refused (400/409/413) or failed (503). */
export const DecisionBodySchema = Type.Object(DECISION_BODY_PROPERTIES, {
  $id: 'Decision',
  additionalProperties: false,
});
export type DecisionBody = Static<typeof DecisionBodySchema>;
