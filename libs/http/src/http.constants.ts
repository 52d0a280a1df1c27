/** DI token of the HttpOptions of this app. */
export const HTTP_OPTIONS = Symbol('HTTP_OPTIONS');
/** Where the route gate leaves the caller's `TokenGrant` on the request, for `@Granted()` and the hot routes. */
export const GRANT_KEY = Symbol('tally:grant');
/** DI token of the app's `TokenStore` (present only with `TALLY_TOKENS_FILE`). */
export const TOKEN_STORE = Symbol('TOKEN_STORE');
