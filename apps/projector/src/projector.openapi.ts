import {
  AuditQuerySchema,
  AuditResponseSchema,
  TopKeysQuerySchema,
  TopKeysResponseSchema,
  UsageQuerySchema,
  UsageResponseSchema,
} from '@tally/api-contract';
import { AUTH_CODES, buildOpenApi, COMMON_CODES, serviceOperations, type OperationSpec } from '@tally/http';

/** The query API's own version, as published in the document (the wire contract's, not the build's). */
export const PROJECTOR_API_VERSION = '1.0.0';

/** What every query may answer besides its body: a refused query, a missing namespace, a corrupt bucket. */
const QUERY_ERRORS = {
  400: { description: 'Unknown or invalid parameters, each listed', errorCodes: ['request.invalid'] },
  404: { description: 'The namespace does not exist', errorCodes: ['namespace.not_found'] },
  500: { description: 'A stored value the layout cannot read', errorCodes: ['projection.corrupt'] },
} as const satisfies OperationSpec['responses'];

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
    summary: 'Denials, degraded decisions, would-deny and policy reloads, oldest first',
    description: 'Without `tenant`, the tenant-less trail (it needs a token scoped to no tenant).',
    access: 'query',
    query: AuditQuerySchema,
    responses: { 200: { description: 'One page', schemas: [AuditResponseSchema] }, ...QUERY_ERRORS },
    errorCodes: AUTH_CODES,
  },
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
