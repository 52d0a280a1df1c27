/** DI token of the HttpOptions of this app. */
export const HTTP_OPTIONS = Symbol('HTTP_OPTIONS');
/** Route metadata: which bearer token class a handler requires. */
export const ACCESS_KEY = 'tally:access';
/** Route metadata: the handler makes the tenant-stage check itself (see `AccessOptions.perTenant`). */
export const PER_TENANT_KEY = 'tally:per-tenant';
/** Where the guard leaves the caller's `TokenGrant` on the request, for `@Granted()`. */
export const GRANT_KEY = Symbol('tally:grant');
/** DI token of the app's `TokenStore` (present only with `TALLY_TOKENS_FILE`). */
export const TOKEN_STORE = Symbol('TOKEN_STORE');
