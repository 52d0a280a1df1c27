/** DI token of the HttpOptions of this app. */
export const HTTP_OPTIONS = Symbol('HTTP_OPTIONS');
/** DI token of the app's `TokenStore` (present only with `TALLY_TOKENS_FILE`). */
export const TOKEN_STORE = Symbol('TOKEN_STORE');
