/** Where the route gate leaves the caller's `TokenGrant` on the request, for `@Granted()` and the hot routes. */
export const GRANT_KEY = Symbol('tally:grant');
