/**
 * @tally/http — what every Tally HTTP app shares: auth before the body, deadlines, TLS, the JSON
 * body, overload shedding, the error contract (ERROR_CODES, problem bodies), request validation
 * compiled from JSON Schemas, kind → HTTP status, the OpenAPI builder and its Markdown rendering,
 * and /healthz, /readyz, /metrics; with `runHttpApp`'s `workers` (decision-api's TALLY_WORKERS), the
 * node:cluster primary (fork, restart, drain) and the worker side of summed metrics and shared reloads.
 *
 * Does NOT own:
 * - the shapes of the bodies (libs/api-contract defines them; this lib compiles and publishes them);
 * - what a decision means (libs/engine), nor its gRPC mapping (libs/envoy-rls);
 * - which operations an app has (each app lists its own, e.g. apps/decision-api decision-api.openapi.ts);
 * - the health and metrics registries (@tally/observability, which http reads and which never
 *   imports http); the settings (@tally/config).
 */
export { HttpModule } from './http.module';
export {
  RequireAccess,
  accessConfig,
  ROLES,
  type Access,
  type AccessOptions,
  type Role,
} from './access.decorator';
export { BearerTokens } from './bearer-tokens';
export { httpOptionsFrom, type HttpOptions } from './http.options';
export { ApiError, type ErrorBody, type FieldError } from './api-error';
export { Granted } from './granted.decorator';
export { ForbiddenError, TokenGrant } from './token-grant';
export { TokenSet, tokenDigestHex, type TokenEntry } from './token-set';
export { compileTokenFile, type TokenFileResult } from './token-file.compiler';
export {
  TokenStore,
  TokensLoadError,
  type TokenReloadResult,
  type TokenReloadTrigger,
  type TokenSource,
} from './token.store';
export { reloadOverHttp } from './file-reload';
export { gatherEverywhere, offerGather, shareReload } from './cluster.worker';
export { problemOf, sendProblem, logProblem, type Problem } from './problem';
export { strictValidationPipe, fieldErrors, validateAs, type Validated } from './validation';
export { compileSchemaCheck, type SchemaCheck } from './schema-validator';
export { QuerySchemaPipe } from './query-schema.pipe';
export { HTTP_STATUS_OF, type DecisionHttpStatus } from './decision-status';
export {
  buildOpenApi,
  type HttpMethod,
  type OpenApiSpec,
  type OperationSpec,
  type ResponseSpec,
} from './openapi';
export { renderOpenApiMarkdown } from './openapi-markdown';
export { openApiController } from './openapi.controller';
export { GRANT_KEY, HTTP_OPTIONS } from './http.constants';
export { ERROR_CODES, isErrorCode, type ErrorCode } from './error-codes';
export { AUTH_CODES, COMMON_CODES, serviceOperations } from './service.openapi';
export { MAX_JSON_DEPTH } from './json-depth';
export { createHttpApp, httpAppOptions, type HttpAppOptions } from './create-http-app';
export { runHttpApp, workerCount, type HttpAppSpec } from './run-http-app';
export { WORKER_NODE_FLAGS, workerAllocatorEnv } from './cluster.runtime';
