/** DI token of the HttpOptions of this app. */
export const HTTP_OPTIONS = Symbol('HTTP_OPTIONS');
/** Route metadata: which bearer token class a handler requires. */
export const ACCESS_KEY = 'tally:access';
