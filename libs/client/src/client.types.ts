/**
 * The SDK's public types. The wire shapes come from the decision API's contract (@tally/api-contract,
 * the same TypeBox definitions the server validates with and publishes as OpenAPI), imported as
 * types only: nothing of the server, Nest or ajv is loaded by the SDK. What is the SDK's own (the
 * parsed headers, the client's fail modes, options) is defined here.
 */
import type {
  BackendFailure,
  DecisionBody,
  DecisionCode,
  DecisionPolicy,
  DecisionRequestBody,
  DecisionWindow,
  DenyReason,
  FieldError,
  Lease,
  LeaseExtendBody,
  LeaseReleaseBody,
  Wire,
} from '@tally/api-contract';
import type { TallyRequestError } from './tally-request.error';

/** Why a decision was refused: exactly the server's deny-reason vocabulary. */
export type TallyDenyReason = DenyReason;

/** The backend failures the server reports on a degraded or refused decision. */
export type TallyBackendFailure = BackendFailure;

/** Machine-readable outcome codes of a decision; `null` on a result means allowed. */
export type TallyDecisionCode = DecisionCode;

/**
 * The question: may the caller identified by `selectors` spend `cost` units now? The wire request,
 * with selector and attribute values typed as the strings the server accepts (the wire takes any
 * value and refuses the others with `selector.identity_invalid`).
 */
export type TallyDecisionRequest = Wire<Omit<DecisionRequestBody, 'selectors' | 'attributes'>> & {
  /** `tenant`, `principal`, `token`, `client`, `route` (1..256 bytes each, trimmed by the server). */
  readonly selectors: Readonly<Record<string, string>>;
  /** Free attributes that policies `match`/`unless` on. */
  readonly attributes?: Readonly<Record<string, string>>;
};

/** One window of one applicable policy. */
export type TallyWindow = Wire<DecisionWindow>;

/** One applicable policy of a decision, in evaluation order. */
export type TallyPolicy = Wire<DecisionPolicy>;

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

/**
 * The answer to one decision: the decision body (as the contract defines it), its status and its
 * parsed headers. `decision_id` is null and `degraded_cause` may be `client_unreachable` only on a
 * result the client made itself under its fail mode (with `local`: allowed, 429 or 503, its window
 * numbers those of the client's own limiter, under the policy name `local_fallback`).
 */
export type TallyDecision = Wire<Omit<DecisionBody, 'decision_id' | 'degraded_cause'>> & {
  /**
   * The status the caller should answer with: 200 allowed, 429 denied by quota, 409 idempotency
   * conflict, 413 cost above `max_cost`, 503 backend failure under fail_closed.
   */
  readonly status: 200 | 409 | 413 | 429 | 503;
  /** ULID of the decision (a replay returns the original's); null only on a client-made result. */
  readonly decision_id: string | null;
  /** With `degraded`: the server's backend failure, or `client_unreachable` when Tally did not answer. */
  readonly degraded_cause?: TallyBackendFailure | 'client_unreachable';
  /** The parsed rate-limit headers; empty (no binding, no quotas) on batch items. */
  readonly rateLimit: TallyRateLimit;
  /**
   * The `RateLimit-*` and `Retry-After` headers exactly as Tally sent them (lower-case names), for
   * relaying to the caller's own clients.
   */
  readonly rateLimitHeaders: Readonly<Record<string, string>>;
  /** Set only on a result the client made itself under its fail mode: why Tally gave no answer. */
  readonly failure?: TallyClientFailure;
};

/**
 * What the client does when Tally does not answer: allow (degraded), refuse (503), or `local`: decide
 * by its own bounded local limiter (`TallyClientOptions.localFallback`, which must then be set).
 */
export type TallyFailMode = 'open' | 'closed' | 'local';

/** One window of the client's local limiter: the server's window maths, at the client's share. */
export interface TallyLocalWindow {
  /** Named in the result's `policies[0].windows` and the `RateLimit` header. */
  readonly name: string;
  /** The deny reason it gives: `burst_quota_exhausted` or `sustained_quota_exhausted`. */
  readonly role: 'burst' | 'sustained';
  /** As in a policy file (`calendar_month` is not offered client-side). */
  readonly algorithm: 'fixed_window' | 'sliding_window' | 'token_bucket' | 'gcra';
  /** Units per period, for all the client processes together (each allows ⌊limit / share⌋). */
  readonly limit: number;
  /** Period in milliseconds. */
  readonly periodMs: number;
  /** `gcra` only (required there): how many units may pass at once, for all the processes together. */
  readonly burst?: number;
}

/**
 * The client's bounded local fallback: while Tally is unreachable, every key (by default a caller's
 * selectors) may spend at most ⌊limit / share⌋ per window in this process, counted in memory.
 */
export interface TallyLocalFallbackOptions {
  /** Every window a key must fit (all must allow). Non-empty. */
  readonly windows: readonly TallyLocalWindow[];
  /** How many client processes enforce at once; each allows ⌊limit / share⌋. Default 1. */
  readonly share?: number;
  /** Keys held in memory at most. Default 10,000. */
  readonly maxKeys?: number;
  /**
   * A new key while every held key still counts: `open` allows it (degraded, uncounted), `closed`
   * refuses it (503). Default `closed`: the bound never turns into "unlimited".
   */
  readonly overflow?: 'open' | 'closed';
  /** The counter key of a request. Default: its selectors, names sorted (attributes and cost aside). */
  readonly key?: (request: TallyDecisionRequest) => string;
  /** The limiter's wall clock, epoch ms. Default `Date.now`; tests pass their own. */
  readonly clock?: () => number;
}

export interface TallyClientOptions {
  /** Decision API origin, e.g. `http://tally:8080` (a path prefix is kept). */
  readonly baseUrl: string;
  /** Caller bearer token (one of the server's `TALLY_API_TOKENS`). */
  readonly token: string;
  /** Deadline of a whole call, retry included. Default 200 ms: Tally is on the caller's hot path. */
  readonly timeoutMs?: number;
  /** Applied when Tally is unreachable, times out or fails with a non-decision 5xx. Default `open`. */
  readonly failMode?: TallyFailMode;
  /** The local limiter of fail mode `local` (required if any call uses it; nothing is held otherwise). */
  readonly localFallback?: TallyLocalFallbackOptions;
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
export type TallyFieldError = Readonly<FieldError>;

/** One item of a batch: its decision, or why the request itself was rejected. */
export type TallyBatchItem =
  | { readonly ok: true; readonly decision: TallyDecision }
  | { readonly ok: false; readonly error: TallyRequestError };

/** The lease an allowed decision holds when a `concurrency` window applied (`decision.lease`). */
export type TallyLease = Wire<Lease>;

/**
 * What `release` did: Tally's answer (`released`; `already_released` — releasing is idempotent;
 * `expired` — the units had come back at `expires_at`), or, when Tally could not be reached, why
 * (the lease then ends at its expiry by itself).
 */
export type TallyRelease =
  | (Wire<LeaseReleaseBody> & { readonly ok: true })
  | { readonly ok: false; readonly failure: TallyClientFailure };

/**
 * What `extend` did: the lease's new expiry (`expires_at`, `ttl_ms` from now, `max_ttl_ms` the most
 * one extension may ask for), or, when Tally could not be reached, why (the lease keeps the expiry it
 * had: retry before it).
 */
export type TallyExtension =
  | (Wire<LeaseExtendBody> & { readonly ok: true })
  | { readonly ok: false; readonly failure: TallyClientFailure };

/** Options of `extend`: the TTL to ask for (default: the lease's `lease_ttl`) and the call's own. */
export interface TallyExtendOptions extends Omit<TallyCallOptions, 'failMode'> {
  /** The lease then expires this long after now; at most its `lease_ttl` (else `lease.ttl_too_long`). */
  readonly ttlMs?: number;
}

/** What `withLease` did: ran the work under a lease (or a degraded allowance), or was refused. */
export type TallyLeaseRun<T> =
  | { readonly ran: true; readonly value: T; readonly decision: TallyDecision }
  | { readonly ran: false; readonly decision: TallyDecision };

/** Options of `withLease`: those of the decision, and what to do when the release fails. */
export interface TallyLeaseOptions extends TallyCallOptions {
  /**
   * Called when the release after the work could not be made (Tally unreachable, or refused it); the
   * work's own result or error still wins. The lease then ends at its expiry. Default: ignore.
   */
  readonly onReleaseError?: (error: unknown, lease: TallyLease) => void;
}
