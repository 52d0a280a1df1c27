// Everything an app's HTTP server shares: the Fastify app factory, auth (tokens, roles, the route
// gate), the error contract and ERROR_CODES, the validation pipe, and /healthz, /readyz, /metrics.
// Does NOT own: the health and metrics registries (@tally/observability, which http reads and which
// never imports http), any route of an app, the settings (@tally/config).
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
export { problemOf, sendProblem, logProblem, type Problem } from './problem';
export { strictValidationPipe, fieldErrors, validateAs, type Validated } from './validation';
export { GRANT_KEY, HTTP_OPTIONS } from './http.constants';
export { ERROR_CODES, isErrorCode, type ErrorCode } from './error-codes';
export { MAX_JSON_DEPTH } from './json-depth';
export { createHttpApp, httpAppOptions, type HttpAppOptions } from './create-http-app';
export { runHttpApp, type HttpAppSpec } from './run-http-app';
