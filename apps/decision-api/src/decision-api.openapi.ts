import {
  BatchRequestSchema,
  BatchResponseSchema,
  DecisionBodySchema,
  DecisionRequestSchema,
  LeaseExtendRequestSchema,
  LeaseExtendSchema,
  LeaseReleaseSchema,
  OverrideItemSchema,
  OverrideListSchema,
  OverridePutSchema,
  PolicyListSchema,
  PolicyReloadSchema,
  PolicyReloadsSchema,
  PolicyStateSchema,
  RATE_LIMIT_HEADERS,
} from '@tally/api-contract';
import {
  AUTH_CODES,
  buildOpenApi,
  COMMON_CODES,
  type OperationSpec,
  serviceOperations,
} from '@tally/openapi';
import type { ErrorCode } from '@tally/errors';

/** The API's own version, as published in the document (the wire contract's, not the build's). */
export const DECISION_API_VERSION = '1.0.0';

const JSON_BODY: ErrorCode[] = [
  'request.invalid',
  'request.malformed_json',
  'request.too_large',
  'request.unsupported_media_type',
];
/** A 503 of an operation whose Redis step failed: the backend failure, as a decision names it. */
const REDIS_FAILED: ErrorCode[] = ['backend.timeout', 'backend.unavailable', 'backend.error'];
const RATE_LIMITED = Object.keys(RATE_LIMIT_HEADERS).filter((h) => h !== 'retry-after');
/** A decision at one status: the rate-limit headers when a policy applies, `Retry-After` when told to wait. */
const decision = (description: string, retry = false) => ({
  description,
  schemas: [DecisionBodySchema],
  headers: retry ? [...RATE_LIMITED, 'retry-after'] : RATE_LIMITED,
});

const OPERATIONS: OperationSpec[] = [
  {
    method: 'post',
    path: '/v1/decisions',
    operationId: 'decide',
    summary: 'May the caller spend `cost` units now?',
    description:
      'Allowed or denied, counted atomically; a denial consumes nothing. Every decision carries the ' +
      '`RateLimit-*` headers of its binding window, and `Retry-After` when denied (429) or failed (503).',
    access: 'decide',
    requestBody: DecisionRequestSchema,
    responses: {
      200: decision(
        'Allowed (also degraded while Redis fails: uncounted under fail_open, counted by the ' +
          'process under local_fallback; or a replay)',
      ),
      400: {
        ...decision('A value the engine refuses, or a body that is not a request'),
        errorCodes: ['request.invalid', 'request.malformed_json'],
      },
      409: decision('The idempotency key was used for a different request'),
      413: { ...decision('The cost is above what the policies allow'), errorCodes: ['request.too_large'] },
      429: decision(
        'Denied by quota or blocked (an override of 0); nothing consumed. Also degraded while Redis ' +
          "fails: a local_fallback policy's own counters, or a block in the process's copy of the " +
          'overrides (local_fallback and fail_open)',
        true,
      ),
      503: {
        ...decision(
          'The backend failed under fail_closed (or, under local_fallback, a new key found the ' +
            "process's key bound full and its policy's overflow is fail_closed)",
          true,
        ),
        errorCodes: ['server.overloaded', 'server.shutting_down'],
      },
    },
    errorCodes: [...AUTH_CODES, 'request.unsupported_media_type'],
  },
  {
    method: 'post',
    path: '/v1/decisions:batch',
    operationId: 'decideBatch',
    summary: 'Up to 1000 independent decisions in one round trip',
    description:
      'Always 200 once the envelope is valid: each result carries the status it would have had alone; ' +
      'an item that is not a valid request is answered 400 on its own, an item for a tenant outside ' +
      "the token's list 403 on its own. Results carry no rate-limit headers.",
    access: 'decide',
    requestBody: BatchRequestSchema,
    responses: { 200: { description: 'One result per request, in order', schemas: [BatchResponseSchema] } },
    errorCodes: [...AUTH_CODES, ...JSON_BODY],
  },
  {
    method: 'post',
    path: '/v1/leases/{id}:release',
    operationId: 'releaseLease',
    summary: "Give a concurrency lease's units back",
    description:
      'The lease of an allowed decision (its `lease.id`). Idempotent: a second release answers ' +
      '`already_released` and changes nothing; a lease past its expiry answers `expired` (its units ' +
      'came back then). A tenant-scoped token releases only leases of its tenants.',
    access: 'decide',
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The lease id, `s<shard>-<decision id>`.',
        schema: { type: 'string' },
      },
    ],
    responses: {
      200: { description: 'What became of the lease', schemas: [LeaseReleaseSchema] },
      400: { description: 'Not a lease id', errorCodes: ['lease.invalid_id'] },
      404: { description: 'No such lease', errorCodes: ['lease.not_found'] },
      503: {
        description: 'Redis failed; retry (releasing is idempotent)',
        errorCodes: REDIS_FAILED,
      },
    },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'post',
    path: '/v1/leases/{id}:extend',
    operationId: 'extendLease',
    summary: 'Keep a live concurrency lease for longer',
    description:
      'The lease then expires `ttl_ms` after now (Redis time), at most the shortest `lease_ttl` in ' +
      'force among its windows, so a holder that stops extending frees its units within one lease ' +
      'TTL. Call it again before `expires_at` to keep the units for long work. An extension never ' +
      'shortens a lease and holds no new units; an expired or released lease is never extended (its ' +
      'units may be someone else’s by then). Repeating a call is harmless. A tenant-scoped token ' +
      'extends only leases of its tenants. Nothing goes on the ledger.',
    access: 'decide',
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The lease id, `s<shard>-<decision id>`.',
        schema: { type: 'string' },
      },
    ],
    requestBody: LeaseExtendRequestSchema,
    requestBodyOptional: true,
    responses: {
      200: { description: 'The new expiry', schemas: [LeaseExtendSchema] },
      400: {
        description: 'Not a lease id, or a TTL above the lease’s `lease_ttl`',
        errorCodes: ['lease.invalid_id', 'lease.ttl_too_long'],
      },
      404: { description: 'No such lease', errorCodes: ['lease.not_found'] },
      409: {
        description: 'The lease no longer holds its units, or its windows are no longer in force',
        errorCodes: ['lease.expired', 'lease.released', 'lease.not_extendable'],
      },
      503: {
        description: 'Redis failed; retry (before `expires_at`)',
        errorCodes: REDIS_FAILED,
      },
    },
    errorCodes: [...AUTH_CODES, ...JSON_BODY],
  },
  {
    method: 'get',
    path: '/v1/policies',
    operationId: 'listPolicies',
    summary: 'The policy set in force',
    access: 'admin',
    responses: { 200: { description: 'The compiled policies', schemas: [PolicyListSchema] } },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/policy-reloads',
    operationId: 'policyReloads',
    summary: 'The last reloads of the policy file, rejected ones with their errors',
    description: 'Newest first, at most 20, kept in memory by this process (a restart starts afresh).',
    access: 'admin',
    responses: { 200: { description: 'The reloads', schemas: [PolicyReloadsSchema] } },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/policies/{name}/state',
    operationId: 'policyState',
    summary: "One policy's counters for the selectors in the query",
    description: 'Read-only: nothing is counted. A tenant-scoped admin token may read its tenants only.',
    access: 'admin',
    parameters: [
      { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
      ...['tenant', 'principal', 'token', 'client', 'route'].map((dim) => ({
        name: dim,
        in: 'query',
        required: false,
        description: `The \`${dim}\` selector.`,
        schema: { type: 'string' },
      })),
    ],
    responses: {
      200: { description: 'The counters', schemas: [PolicyStateSchema] },
      400: {
        description: 'A selector the engine refuses',
        errorCodes: ['selector.identity_missing', 'selector.identity_invalid'],
      },
      404: { description: 'No such policy', errorCodes: ['policy.not_found'] },
      503: {
        description: 'Redis failed',
        errorCodes: REDIS_FAILED,
      },
    },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'post',
    path: '/v1/policies:reload',
    operationId: 'reloadPolicies',
    summary: 'Re-read the policy file now',
    description: 'An invalid file is refused with every error; the running set stays in force.',
    access: 'admin',
    responses: {
      200: { description: 'The version now in force', schemas: [PolicyReloadSchema] },
      422: { description: 'The file is invalid', errorCodes: ['policy.invalid'] },
      503: { description: 'A worker did not confirm the reload; retry', errorCodes: ['reload.incomplete'] },
    },
    errorCodes: AUTH_CODES,
  },
  ...overrideOperations(),
  ...serviceOperations("Each component's state; its `detail` only with the admin token."),
];

/** `/v1/overrides`: runtime limits per policy and key (docs/semantics.md, "Overrides"). */
function overrideOperations(): OperationSpec[] {
  const path = '/v1/overrides/{policy}/{key}';
  const target = [
    { name: 'policy', in: 'path', required: true, schema: { type: 'string' } },
    {
      name: 'key',
      in: 'path',
      required: true,
      description:
        "The policy's key value as the engine builds it, URL-encoded (`-` for a policy without key dims).",
      schema: { type: 'string' },
    },
    {
      name: 'tenant',
      in: 'query',
      required: false,
      description: "Required when the policy's key has no `tenant` dim; else it must match the key's.",
      schema: { type: 'string' },
    },
  ];
  const invalid = {
    description: 'Unknown policy or window, a key that does not fit the policy, bad limits, expiry or reason',
    errorCodes: ['request.invalid'] as ErrorCode[],
  };
  const absent = { description: 'No override in force', errorCodes: ['override.not_found'] as ErrorCode[] };
  return [
    {
      method: 'get',
      path: '/v1/overrides',
      operationId: 'listOverrides',
      summary: 'Overrides in force, paginated, by policy and tenant',
      access: 'overrides:read',
      parameters: ['policy', 'tenant', 'cursor', 'limit'].map((name) => ({
        name,
        in: 'query',
        required: false,
        schema: { type: 'string' },
      })),
      responses: { 200: { description: 'One page', schemas: [OverrideListSchema] }, 400: invalid },
      errorCodes: AUTH_CODES,
    },
    {
      method: 'get',
      path,
      operationId: 'getOverride',
      summary: 'One override in force',
      access: 'overrides:read',
      parameters: target,
      responses: {
        200: { description: 'The override', schemas: [OverrideItemSchema] },
        400: invalid,
        404: absent,
      },
      errorCodes: AUTH_CODES,
    },
    {
      method: 'put',
      path,
      operationId: 'setOverride',
      summary: 'Set the limits of some or all windows of a policy for one key (0 blocks)',
      description: 'Takes effect on the next decision; every change takes a new version.',
      access: 'overrides:write',
      parameters: target,
      requestBody: OverridePutSchema,
      responses: {
        200: { description: 'Replaced an override in force', schemas: [OverrideItemSchema] },
        201: { description: 'Created', schemas: [OverrideItemSchema] },
        400: invalid,
      },
      errorCodes: [...AUTH_CODES, ...JSON_BODY],
    },
    {
      method: 'delete',
      path,
      operationId: 'removeOverride',
      summary: "Remove an override: the policy's limits apply again",
      access: 'overrides:write',
      parameters: target,
      responses: { 204: { description: 'Removed' }, 400: invalid, 404: absent },
      errorCodes: AUTH_CODES,
    },
  ];
}

/** The decision API's OpenAPI 3.1 document, from the contract's schemas (served at `/openapi.json`). */
export function decisionApiDocument(): Record<string, unknown> {
  return buildOpenApi({
    title: 'Tally decision API',
    version: DECISION_API_VERSION,
    description:
      'Quota decisions over HTTP: atomic in Redis, recorded on Kafka. Every refusal that is not a ' +
      'decision is `{code, message, errors?}`; callers branch on `code` (`x-tally-error-codes`).',
    operations: OPERATIONS,
    commonErrorCodes: COMMON_CODES,
    headers: Object.fromEntries(
      Object.entries(RATE_LIMIT_HEADERS).map(([name, description]) => [
        name,
        { description, schema: { type: 'string' } },
      ]),
    ),
  });
}
