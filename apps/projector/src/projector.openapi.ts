import {
  AuditQuerySchema,
  AuditResponseSchema,
  TopKeysQuerySchema,
  TopKeysResponseSchema,
  UsageQuerySchema,
  UsageResponseSchema,
} from '@tally/api-contract';
import { type TObject } from '@sinclair/typebox';
import { AUTH_CODES, buildOpenApi, serviceOperations, type ErrorCode, type OperationSpec } from '@tally/http';

/** The query API's own version, as published in the document (the wire contract's, not the build's). */
export const PROJECTOR_API_VERSION = '1.0.0';

/** What any request can meet before (or beside) its route: HTTP framing, deadlines, overload, bugs. */
const COMMON: ErrorCode[] = [
  'request.malformed_http',
  'request.invalid_content_length',
  'request.invalid_url',
  'request.aborted',
  'request.timeout',
  'request.uri_too_long',
  'request.expectation_failed',
  'request.header_too_large',
  'route.method_not_allowed',
  'server.overloaded',
  'server.shutting_down',
  'internal',
];
/** What every query may answer besides its body: a refused query, a missing namespace, a corrupt bucket. */
const QUERY_ERRORS = {
  400: { description: 'Unknown or invalid parameters, each listed', errorCodes: ['request.invalid'] },
  404: { description: 'The namespace does not exist', errorCodes: ['namespace.not_found'] },
  500: { description: 'A stored value the layout cannot read', errorCodes: ['projection.corrupt'] },
} as const satisfies OperationSpec['responses'];

/** A query schema's properties as OpenAPI query parameters (the schema stays the one definition). */
export function queryParameters(schema: TObject): Record<string, unknown>[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, property]) => {
    const { description, ...rest } = property as { description?: string } & Record<string, unknown>;
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(description && { description }),
      schema: JSON.parse(JSON.stringify(rest)) as unknown,
    };
  });
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
    parameters: queryParameters(UsageQuerySchema),
    responses: { 200: { description: 'One page', schemas: [UsageResponseSchema] }, ...QUERY_ERRORS },
    errorCodes: AUTH_CODES,
  },
  {
    method: 'get',
    path: '/v1/top-keys',
    operationId: 'topKeys',
    summary: "The heaviest policy keys of one bucket of one tenant's policy",
    access: 'query',
    parameters: queryParameters(TopKeysQuerySchema),
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
    parameters: queryParameters(AuditQuerySchema),
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
    commonErrorCodes: COMMON,
  });
}
