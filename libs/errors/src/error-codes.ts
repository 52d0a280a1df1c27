/**
 * The error vocabulary of every Tally API: each `code` an error body may carry, with the statuses it
 * comes with and what it means. This table is the one source of truth: the error table of docs/decision-api.md is
 * checked against it (error-codes.spec.ts) and the hostile-input suite accepts no code outside it.
 * Callers branch on `code`, never on `message`; a code, once published, keeps its meaning.
 */
export const ERROR_CODES = {
  'request.invalid': {
    statuses: [400],
    meaning:
      'a field is missing, unknown or of the wrong type (`errors[]` names each); or the JSON body nests deeper than 32 levels',
  },
  'request.malformed_json': { statuses: [400], meaning: 'the body is empty or not JSON' },
  'request.malformed_http': {
    statuses: [400],
    meaning:
      'not a valid HTTP/1.1 request: request line, header syntax, framing (chunks, content-length with transfer-encoding), or no `Host`; the connection is closed',
  },
  'request.invalid_content_length': {
    statuses: [400],
    meaning: 'the content-length is not a number, comes twice, or does not match the body',
  },
  'request.invalid_url': { statuses: [400], meaning: 'the path has a malformed percent-escape' },
  'request.aborted': {
    statuses: [400],
    meaning: 'the client closed the connection before the body was read',
  },
  'request.timeout': {
    statuses: [408],
    meaning:
      'the headers did not arrive within `TALLY_HEADERS_TIMEOUT_MS`, or the whole request within `TALLY_REQUEST_TIMEOUT_MS`; the connection is closed',
  },
  'request.too_large': { statuses: [413], meaning: 'the body is larger than `TALLY_BODY_LIMIT_BYTES`' },
  'request.uri_too_long': { statuses: [414], meaning: 'a path segment is longer than 100 characters' },
  'request.unsupported_media_type': { statuses: [415], meaning: 'the body is not `application/json`' },
  'request.expectation_failed': {
    statuses: [417],
    meaning: 'an `Expect` header other than `100-continue`',
  },
  'request.header_too_large': {
    statuses: [431],
    meaning: 'the request line and headers exceed 16 KiB; the connection is closed',
  },
  'route.not_found': { statuses: [404], meaning: 'no such route' },
  'route.method_not_allowed': {
    statuses: [405],
    meaning: 'the route exists, not with this method; `Allow` lists those it has',
  },
  'auth.missing': { statuses: [401], meaning: 'no `Authorization: Bearer <token>` header' },
  'auth.invalid': { statuses: [401], meaning: 'the bearer token is not accepted' },
  'auth.forbidden': {
    statuses: [403],
    meaning: 'the token is valid but lacks the role (or the tenant) this call needs',
  },
  'selector.identity_missing': {
    statuses: [400],
    meaning: 'a key dimension of an applicable policy is absent',
  },
  'selector.identity_invalid': {
    statuses: [400],
    meaning: 'a selector or attribute value is empty, too long or has control characters',
  },
  'cost.invalid': { statuses: [400], meaning: 'cost is not a whole number ≥ 0' },
  'cost.too_large': {
    statuses: [413],
    meaning: 'cost is above what the applicable policies (or the global ceiling) allow; nothing consumed',
  },
  'idempotency_key.invalid': {
    statuses: [400],
    meaning: 'the idempotency key is outside its alphabet or length',
  },
  'idempotency.conflict': {
    statuses: [409],
    meaning: 'the idempotency key was used for a different request',
  },
  'quota.exceeded': { statuses: [429], meaning: 'denied by quota; nothing consumed' },
  'backend.timeout': { statuses: [503], meaning: 'Redis missed its deadline under a fail_closed policy' },
  'backend.unavailable': {
    statuses: [503],
    meaning: 'Redis is unreachable (or the breaker is open) under a fail_closed policy',
  },
  'backend.error': { statuses: [503], meaning: 'Redis answered with an error under a fail_closed policy' },
  'server.overloaded': {
    statuses: [503],
    meaning: 'too many requests in flight: the API sheds load (never a quota answer)',
  },
  'server.shutting_down': {
    statuses: [503],
    meaning: 'the instance is closing; retry (another instance answers)',
  },
  'policy.not_found': { statuses: [404], meaning: 'no policy of that name' },
  'policy.invalid': {
    statuses: [422],
    meaning: 'a reloaded policy file is invalid; every error is listed and the running set stays',
  },
  'tokens.invalid': {
    statuses: [422],
    meaning: 'a reloaded tokens file is invalid; every error is listed and the running token set stays',
  },
  'reload.incomplete': {
    statuses: [503],
    meaning:
      'with several workers, one did not confirm the reload in time or they read different versions; retry',
  },
  'namespace.not_found': { statuses: [404], meaning: 'no projection namespace of that name' },
  'projection.corrupt': {
    statuses: [500],
    meaning: 'a stored projection value is not what the projector writes: replay the namespace',
  },
  'namespace.switch_refused': {
    statuses: [409],
    meaning: 'the projection namespace cannot be made active now (a replay still running, without `force`)',
  },
  'simulate.policy_invalid': {
    statuses: [422],
    meaning: 'the proposed policy file of a simulation is invalid; every error is listed',
  },
  'upstream.not_configured': {
    statuses: [503],
    meaning:
      "the console's URL of that service is not set (`TALLY_CONSOLE_DECISION_API_URL`, `TALLY_CONSOLE_RELAY_URL`)",
  },
  'upstream.unreachable': {
    statuses: [502],
    meaning: 'the projector could not reach the decision API or the relay for the console; retry',
  },
  'console.not_built': {
    statuses: [404],
    meaning: 'the console assets are not in `TALLY_CONSOLE_DIR` (run `npm run build`)',
  },
  internal: { statuses: [500], meaning: 'a bug; the message never says more' },
  'lease.invalid_id': {
    statuses: [400],
    meaning:
      'not a lease id (`s<shard>-<decision id>`, as a decision answered it), or no `:release` / `:extend` after it',
  },
  'lease.not_found': {
    statuses: [404],
    meaning: 'no such lease: never taken, or gone one lease TTL after its expiry',
  },
  'lease.expired': {
    statuses: [409],
    meaning: 'the lease expired before the extension; its units are no longer held (take a new lease)',
  },
  'lease.released': {
    statuses: [409],
    meaning: 'the lease was released before the extension; its units are no longer held',
  },
  'lease.ttl_too_long': {
    statuses: [400],
    meaning:
      "`ttl_ms` is above the lease's `lease_ttl` (the shortest in force among its windows); nothing changes",
  },
  'lease.not_extendable': {
    statuses: [409],
    meaning: "none of the lease's windows is in the policy set in force; the lease ends at its expiry",
  },
  'quota.blocked': {
    statuses: [429],
    meaning: 'the key is blocked by an override of 0 (reason `blocked`); nothing consumed',
  },
  'override.not_found': { statuses: [404], meaning: 'no override for that policy and key (or it expired)' },
} as const satisfies Record<string, { readonly statuses: readonly number[]; readonly meaning: string }>;

/** A code of the vocabulary. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Whether `code` is in the vocabulary (tests and the SDK use it on answers they did not build). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, code);
}
