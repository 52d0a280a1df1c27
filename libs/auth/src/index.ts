/**
 * @tally/auth — who may call what: bearer tokens (`BearerTokens`: the environment's simple form and
 * the tokens file, found by SHA-256 digest in constant time), roles and route access
 * (`RequireAccess`, `accessConfig`), grants and the tenant stage (`TokenGrant`, `@Granted()`), the
 * per-connection and per-peer grant memory, the tokens file (DTO, checks, compiler, `TokenStore`).
 *
 * Does NOT own:
 * - the route gate that runs these checks before a body is read, nor `POST /v1/tokens:reload`
 *   and its metrics (@tally/http, which wires this lib into each app);
 * - the error vocabulary (@tally/errors); the settings (@tally/config);
 * - hashing of `token` selector values (@tally/policy).
 */
export { accessConfig, accessOf, RequireAccess, type RouteAccess } from './access.decorator';
export { GRANT_KEY } from './auth.constants';
export type { AuthOptions } from './auth.options';
export { BearerTokens } from './bearer-tokens';
export { Granted } from './granted.decorator';
export { compileTokenFile } from './token-file.compiler';
export { ForbiddenError, TokenGrant } from './token-grant';
export { envTokenEntries, tokenDigestHex, TokenSet } from './token-set';
export { TokensLoadError, TokenStore } from './token.store';
