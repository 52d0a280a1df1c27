import { LivenessSchema, ReadinessSchema, TokensReloadSchema } from '@tally/api-contract';
import { Type } from '@sinclair/typebox';
import type { ErrorCode } from '@tally/errors';
import { type OperationSpec } from './openapi';

/** What any request can meet before (or beside) its route: HTTP framing, deadlines, overload, bugs. */
export const COMMON_CODES: readonly ErrorCode[] = [
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

/** The refusals of a route that needs a token. */
export const AUTH_CODES: readonly ErrorCode[] = ['auth.missing', 'auth.invalid', 'auth.forbidden'];

/**
 * The operations every Tally HTTP app serves through this lib (the tokens reload, health, metrics and
 * the document itself), as each app's OpenAPI document lists them. `readiness` says which components
 * that app's readiness reports.
 */
export function serviceOperations(readiness: string): OperationSpec[] {
  return [
    {
      method: 'post',
      path: '/v1/tokens:reload',
      operationId: 'reloadTokens',
      summary: 'Re-read the tokens file now (only when `TALLY_TOKENS_FILE` is set)',
      access: 'admin',
      responses: {
        200: { description: 'The tokens file version now in force', schemas: [TokensReloadSchema] },
        422: { description: 'The file is invalid', errorCodes: ['tokens.invalid'] },
        503: { description: 'A worker did not confirm the reload; retry', errorCodes: ['reload.incomplete'] },
      },
      errorCodes: [...AUTH_CODES, 'route.not_found'],
    },
    {
      method: 'get',
      path: '/healthz',
      operationId: 'liveness',
      summary: 'Liveness: the process answers',
      access: 'public',
      responses: { 200: { description: 'Alive', schemas: [LivenessSchema] } },
    },
    {
      method: 'get',
      path: '/readyz',
      operationId: 'readiness',
      summary: 'Readiness: 200 when healthy or degraded, 503 when unavailable',
      description: readiness,
      access: 'public',
      responses: {
        200: { description: 'Serving', schemas: [ReadinessSchema] },
        503: { description: 'Not serving', schemas: [ReadinessSchema] },
      },
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary: 'Prometheus text exposition',
      access: 'public',
      responses: {
        200: { description: 'Metrics', contentType: 'text/plain', schemas: [Type.String()] },
      },
    },
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openApi',
      summary: 'This document',
      access: 'public',
      responses: { 200: { description: 'OpenAPI 3.1', schemas: [Type.Object({})] } },
    },
  ];
}
