/**
 * The SDK's public types. They restate the decision API's wire contract (DESIGN §3) on their own,
 * without importing the server's libs, so the SDK can be published and versioned alone.
 */
import type { TallyRequestError } from './tally-request.error';

/** Why a decision was refused: exactly the server's deny-reason vocabulary. */
export type TallyDenyReason =
  | 'burst_quota_exhausted'
  | 'sustained_quota_exhausted'
  | 'selector_identity_missing'
  | 'selector_identity_invalid'
  | 'backend_timeout'
  | 'backend_unavailable'
  | 'backend_error';

/** The backend failures the server reports on a degraded or refused decision. */
export type TallyBackendFailure = Extract<
  TallyDenyReason,
  'backend_timeout' | 'backend_unavailable' | 'backend_error'
>;

/** Machine-readable outcome codes of a decision; `null` on a result means allowed. */
export type TallyDecisionCode =
  | 'quota.exceeded'
  | 'idempotency.conflict'
  | 'cost.too_large'
  | 'cost.invalid'
  | 'idempotency_key.invalid'
  | 'selector.identity_missing'
  | 'selector.identity_invalid'
  | 'backend.timeout'
  | 'backend.unavailable'
  | 'backend.error';

/** The question: may the caller identified by `selectors` spend `cost` units now? */
export interface TallyDecisionRequest {
  /** `tenant`, `principal`, `token`, `client`, `route` (1..256 bytes each, trimmed by the server). */
  readonly selectors: Readonly<Record<string, string>>;
  /** Free attributes that policies `match`/`unless` on. */
  readonly attributes?: Readonly<Record<string, string>>;
  /** Units to spend, a whole number ≥ 0; the server defaults it to 1. 0 reports state, spends nothing. */
  readonly cost?: number;
  /**
   * 1..255 printable ASCII characters (0x21–0x7E: no spaces, no control characters, no non-ASCII),
   * else 400 `idempotency_key.invalid`. Makes the request replayable: the same key and request answer
   * the stored decision for the server's idempotency TTL.
   */
  readonly idempotency_key?: string;
}

/** One window of one applicable policy. */
export interface TallyWindow {
  /** Window name, unique within its policy. */
  readonly name: string;
  /** `burst` or `sustained`: which deny reason this window produces. */
  readonly role: 'burst' | 'sustained';
  /** Units per period (token bucket: capacity). */
  readonly limit: number;
  /** Units left after this decision; the full limit when the decision is degraded (unknown). */
  readonly remaining: number;
  /** Milliseconds until the window is back to its full limit. */
  readonly reset_ms: number;
}

/** One applicable policy of a decision, in evaluation order. */
export interface TallyPolicy {
  readonly name: string;
  /** `enforce` policies can deny; `shadow` policies only count and report `would_deny`. */
  readonly mode: 'enforce' | 'shadow';
  /** Shadow policies only: true when enforcing would have denied. */
  readonly would_deny?: boolean;
  readonly windows: readonly TallyWindow[];
}

/** The binding window as the `RateLimit-*` headers name it. */
export interface TallyRateLimitBinding {
  /** `RateLimit-Name`: the binding policy. */
  readonly policy: string;
  /** The window within that policy (from the draft `RateLimit` header); null when not sent. */
  readonly window: string | null;
  /** `RateLimit-Limit`. */
  readonly limit: number;
  /** `RateLimit-Remaining`. */
  readonly remaining: number;
  /** `RateLimit-Reset`, whole seconds. */
  readonly resetSeconds: number;
}

/** One entry of the draft `RateLimit-Policy` header: an enforced window and its quota. */
export interface TallyQuota {
  /** `<policy>.<window>`. */
  readonly id: string;
  /** `q`: units per period. */
  readonly limit: number;
}

/** The parsed `RateLimit-*` and `Retry-After` headers of a decision. */
export interface TallyRateLimit {
  /** The denying window, else the enforced window with the least left; null when none applies. */
  readonly binding: TallyRateLimitBinding | null;
  /** Every enforced window (`RateLimit-Policy`); shadow policies never show. */
  readonly quotas: readonly TallyQuota[];
  /** `Retry-After` in whole seconds (429 and 503 only); null when absent. */
  readonly retryAfterSeconds: number | null;
}

/** Why the client could not get an answer from Tally (and so applied its fail mode). */
export interface TallyClientFailure {
  /**
   * - `timeout`: no full answer within `timeoutMs`;
   * - `connection`: refused, reset, DNS, TLS…;
   * - `server_error`: a 5xx that is not a decision (e.g. `server.overloaded`, a proxy's 502);
   * - `invalid_response`: an answer that is not a decision body.
   */
  readonly kind: 'timeout' | 'connection' | 'server_error' | 'invalid_response';
  /** For logs: the error or status line. */
  readonly message: string;
}

/** The answer to one decision: the decision body, its status and its parsed headers. */
export interface TallyDecision {
  /**
   * The status the caller should answer with: 200 allowed, 429 denied by quota, 409 idempotency
   * conflict, 413 cost above `max_cost`, 503 backend failure under fail_closed.
   */
  readonly status: 200 | 409 | 413 | 429 | 503;
  /** True when the caller may spend the cost now (also when degraded under a fail-open mode). */
  readonly allowed: boolean;
  /** ULID of the decision (a replay returns the original's); null only on a client-made result. */
  readonly decision_id: string | null;
  /** Why it was refused; null when allowed and for 409/413. */
  readonly reason: TallyDenyReason | null;
  /** Machine-readable refusal code; null when allowed. */
  readonly code: TallyDecisionCode | null;
  /** How long to wait before retrying; 0 when allowed. */
  readonly retry_after_ms: number;
  /** True when a failure let the request through uncounted (server fail_open or client fail-open). */
  readonly degraded: boolean;
  /** With `degraded`: the server's backend failure, or `client_unreachable` when Tally did not answer. */
  readonly degraded_cause?: TallyBackendFailure | 'client_unreachable';
  /** True when this is the stored decision of an earlier request with the same idempotency key. */
  readonly replayed: boolean;
  /** Every applicable policy; `[]` when none applies (or the result was made by the client). */
  readonly policies: readonly TallyPolicy[];
  /** Human-readable detail of a 409/413. */
  readonly message?: string;
  /** The parsed rate-limit headers; empty (no binding, no quotas) on batch items. */
  readonly rateLimit: TallyRateLimit;
  /**
   * The `RateLimit-*` and `Retry-After` headers exactly as Tally sent them (lower-case names), for
   * relaying to the caller's own clients.
   */
  readonly rateLimitHeaders: Readonly<Record<string, string>>;
  /** Set only on a result the client made itself under its fail mode: why Tally gave no answer. */
  readonly failure?: TallyClientFailure;
}

/** What the client does when Tally does not answer: allow (degraded) or refuse (503). */
export type TallyFailMode = 'open' | 'closed';

export interface TallyClientOptions {
  /** Decision API origin, e.g. `http://tally:8080` (a path prefix is kept). */
  readonly baseUrl: string;
  /** Caller bearer token (one of the server's `TALLY_API_TOKENS`). */
  readonly token: string;
  /** Deadline of a whole call, retry included. Default 200 ms: Tally is on the caller's hot path. */
  readonly timeoutMs?: number;
  /** Applied when Tally is unreachable, times out or fails with a non-decision 5xx. Default `open`. */
  readonly failMode?: TallyFailMode;
  /** Keep-alive sockets per origin. Default 64. */
  readonly maxSockets?: number;
}

/** Per-call options. */
export interface TallyCallOptions {
  /** Cancels the call; a cancelled call rejects with the signal's reason and applies no fail mode. */
  readonly signal?: AbortSignal;
  /** Overrides the client's `timeoutMs` for this call. */
  readonly timeoutMs?: number;
  /** Overrides the client's `failMode` for this call. */
  readonly failMode?: TallyFailMode;
}

/** One field problem of a rejected request. */
export interface TallyFieldError {
  readonly path: string;
  readonly message: string;
}

/** One item of a batch: its decision, or why the request itself was rejected. */
export type TallyBatchItem =
  | { readonly ok: true; readonly decision: TallyDecision }
  | { readonly ok: false; readonly error: TallyRequestError };
