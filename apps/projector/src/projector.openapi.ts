import {
  NamespacesSchema,
  NamespaceSwitchedSchema,
  NamespaceSwitchSchema,
  OverrideItemSchema,
  OverrideListSchema,
  OverridePutSchema,
  OverviewSchema,
  PipelineSchema,
  PolicyListSchema,
  PolicyReloadsSchema,
  SessionSchema,
  SimulateRequestSchema,
  SimulationSchema,
  AuditQuerySchema,
  AuditResponseSchema,
  TopKeysQuerySchema,
  TopKeysResponseSchema,
  UsageQuerySchema,
  UsageResponseSchema,
} from '@tally/api-contract';
import {
  AUTH_CODES,
  buildOpenApi,
  COMMON_CODES,
  type OperationSpec,
  serviceOperations,
} from '@tally/openapi';

/** The refusals of every operation the projector forwards to the decision API (the console's). */
const UPSTREAM = {
  502: { description: 'The decision API did not answer', errorCodes: ['upstream.unreachable'] },
  503: { description: 'No decision API URL', errorCodes: ['upstream.not_configured'] },
} as const satisfies OperationSpec['responses'];

/** The query API's own version, as published in the document (the wire contract's, not the build's). */
export const PROJECTOR_API_VERSION = '1.0.0';

/** What every query may answer besides its body: a refused query, a missing namespace, a corrupt bucket. */
const QUERY_ERRORS = {
  400: { description: 'Unknown or invalid parameters, each listed', errorCodes: ['request.invalid'] },
  404: { description: 'The namespace does not exist', errorCodes: ['namespace.not_found'] },
  500: { description: 'A stored value the layout cannot read', errorCodes: ['projection.corrupt'] },
} as const satisfies OperationSpec['responses'];

/** What the operator console calls besides the queries (docs/adr/0007-operator-console.md). */
const CONSOLE_OPERATIONS: OperationSpec[] = [
  {
    method: 'get',
    path: '/v1/session',
    operationId: 'session',
    summary: 'What the presented token may do: its roles and tenants',
    description: 'Any accepted token; the console hides what the token may not read.',
    access: 'caller',
    responses: { 200: { description: 'The token’s grant', schemas: [SessionSchema] } },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/overview',
    operationId: 'overview',
    summary: "The last hour of the decision API's decisions/s, and every component's health",
    description:
      "Rates between samples of the decision API's `/metrics` taken every `TALLY_CONSOLE_SAMPLE_INTERVAL` " +
      '(kept in memory: an hour, since this projector started). The query or the admin role, without a tenant list.',
    access: 'caller',
    responses: { 200: { description: 'Series and health', schemas: [OverviewSchema] } },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/pipeline',
    operationId: 'pipeline',
    summary: 'Outbox depth and age, projector group lag per partition, newest dead letters',
    access: 'admin',
    responses: { 200: { description: 'The pipeline', schemas: [PipelineSchema] } },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/namespaces',
    operationId: 'namespaces',
    summary: 'Projection namespaces with their replay state',
    access: 'admin',
    responses: { 200: { description: 'The namespaces', schemas: [NamespacesSchema] } },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'post',
    path: '/v1/namespaces:switch',
    operationId: 'switchNamespace',
    summary: 'Make another namespace the one queries read and the projector writes',
    description: '`confirm` must repeat `name`; a replay still running needs `force`.',
    access: 'admin',
    requestBody: NamespaceSwitchSchema,
    responses: {
      200: { description: 'Switched', schemas: [NamespaceSwitchedSchema] },
      400: {
        description: 'Invalid body, or `confirm` differs',
        errorCodes: ['request.invalid', 'request.malformed_json'],
      },
      404: { description: 'No such namespace', errorCodes: ['namespace.not_found'] },
      409: { description: 'Refused now', errorCodes: ['namespace.switch_refused'] },
    },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'post',
    path: '/v1/policies:simulate',
    operationId: 'simulatePolicies',
    summary: 'Validate a proposed policy file and replay recorded decisions under it',
    description:
      'As `tally simulate`: the range’s recorded decisions re-evaluated, actual vs proposed, per policy.',
    access: 'admin',
    requestBody: SimulateRequestSchema,
    responses: {
      200: { description: 'The simulation', schemas: [SimulationSchema] },
      400: {
        description: 'Invalid body or range',
        errorCodes: ['request.invalid', 'request.malformed_json'],
      },
      422: { description: 'The proposed file is invalid', errorCodes: ['simulate.policy_invalid'] },
    },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/decision-api/policies',
    operationId: 'decisionApiPolicies',
    summary: "The decision API's `GET /v1/policies`, fetched with the caller's token",
    access: 'admin',
    responses: {
      200: { description: 'The policy set in force', schemas: [PolicyListSchema] },
      ...UPSTREAM,
    },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/decision-api/policy-reloads',
    operationId: 'decisionApiPolicyReloads',
    summary: "The decision API's `GET /v1/policy-reloads`, fetched with the caller's token",
    access: 'admin',
    responses: {
      200: { description: 'The recent reloads', schemas: [PolicyReloadsSchema] },
      ...UPSTREAM,
    },
    errorCodes: AUTH_CODES,
  },
  ...overrideForwards(),
];

/**
 * The decision API's `/v1/overrides`, forwarded with the caller's token for the console's Overrides
 * page: its answers and its refusals as the decision API gives them.
 */
function overrideForwards(): OperationSpec[] {
  const path = '/v1/decision-api/overrides/{policy}/{key}';
  const target = [
    { name: 'policy', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'key', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'tenant', in: 'query', required: false, schema: { type: 'string' } },
  ];
  const invalid = { description: 'Refused by the decision API', errorCodes: ['request.invalid'] } as const;
  return [
    {
      method: 'get',
      path: '/v1/decision-api/overrides',
      operationId: 'decisionApiOverrides',
      summary: "The decision API's `GET /v1/overrides`, fetched with the caller's token",
      access: 'overrides:read',
      parameters: ['policy', 'tenant', 'cursor', 'limit'].map((name) => ({
        name,
        in: 'query',
        required: false,
        schema: { type: 'string' },
      })),
      responses: {
        200: { description: 'One page', schemas: [OverrideListSchema] },
        400: invalid,
        ...UPSTREAM,
      },
      errorCodes: AUTH_CODES,
    },
    {
      method: 'put',
      path,
      operationId: 'decisionApiSetOverride',
      summary: "The decision API's `PUT /v1/overrides/{policy}/{key}`, with the caller's token",
      access: 'overrides:write',
      parameters: target,
      requestBody: OverridePutSchema,
      responses: {
        200: { description: 'Replaced an override in force', schemas: [OverrideItemSchema] },
        201: { description: 'Created', schemas: [OverrideItemSchema] },
        400: { description: 'Refused', errorCodes: ['request.invalid', 'request.malformed_json'] },
        ...UPSTREAM,
      },
      errorCodes: AUTH_CODES,
    },
    {
      method: 'delete',
      path,
      operationId: 'decisionApiRemoveOverride',
      summary: "The decision API's `DELETE /v1/overrides/{policy}/{key}`, with the caller's token",
      access: 'overrides:write',
      parameters: target,
      responses: {
        204: { description: 'Removed' },
        400: invalid,
        404: { description: 'No override in force', errorCodes: ['override.not_found'] },
        ...UPSTREAM,
      },
      errorCodes: AUTH_CODES,
    },
  ];
}

const OPERATIONS: OperationSpec[] = [
  {
    method: 'get',
    path: '/v1/usage',
    operationId: 'usage',
    summary: "A tenant's usage per bucket, and the total of the whole range",
    description:
      'Pages by bucket start; every page carries the total of the whole range. A tenant-scoped ' +
      'token may read its tenants only.',
    access: 'query',
    query: UsageQuerySchema,
    responses: { 200: { description: 'One page', schemas: [UsageResponseSchema] }, ...QUERY_ERRORS },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/top-keys',
    operationId: 'topKeys',
    summary: "The heaviest policy keys of one bucket of one tenant's policy",
    access: 'query',
    query: TopKeysQuerySchema,
    responses: { 200: { description: 'The keys', schemas: [TopKeysResponseSchema] }, ...QUERY_ERRORS },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/audit',
    operationId: 'audit',
    summary: 'Denials, degraded decisions, would-deny, policy reloads and override changes, oldest first',
    description: 'Without `tenant`, the tenant-less trail (it needs a token scoped to no tenant).',
    access: 'query',
    query: AuditQuerySchema,
    responses: { 200: { description: 'One page', schemas: [AuditResponseSchema] }, ...QUERY_ERRORS },
    errorCodes: AUTH_CODES,
  },
  ...CONSOLE_OPERATIONS,
  ...serviceOperations(
    "Each component's state (Redis, the consumer group); its `detail` only with the admin token.",
  ),
];

/** The projector's OpenAPI 3.1 document, from the contract's schemas (served at `/openapi.json`). */
export function projectorDocument(): Record<string, unknown> {
  return buildOpenApi({
    title: 'Tally projector query API',
    version: PROJECTOR_API_VERSION,
    description:
      'Usage, top keys and the audit trail, read from the projections the projector folds from the ' +
      'Kafka ledger. Every refusal is `{code, message, errors?}`; callers branch on `code` ' +
      '(`x-tally-error-codes`).',
    operations: OPERATIONS,
    commonErrorCodes: COMMON_CODES,
  });
}
