/** DI token of the HttpOptions of this app. */
export const HTTP_OPTIONS = Symbol('HTTP_OPTIONS');
