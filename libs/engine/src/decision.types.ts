import type { DenyReason } from '@tally/events';
import type { PolicyMode, WindowRole } from '@tally/policy';

/**
 * A decision request as the transports hand it over: shape-checked by the HTTP DTO (or the gRPC
 * mapper), values not yet trusted. The engine normalizes and validates every field itself.
 */
export interface DecisionRequest {
  /** `tenant`, `principal`, `token`, `client`, `route` → string values. */
  readonly selectors: unknown;
  /** Free attributes for `match`/`unless`. */
  readonly attributes?: unknown;
  /** Units to spend: an integer ≥ 0; 0 is a peek that reports state and writes nothing. */
  readonly cost: unknown;
  /**
   * 1..255 printable ASCII characters (0x21–0x7E, see idempotency-key.ts); an allowed decision is
   * replayable by it for the idempotency TTL.
   */
  readonly idempotency_key?: unknown;
}

/**
 * Stable machine-readable outcome codes; `null` when allowed. The HTTP status that goes with each is
 * in `Decision.status`.
 */
export type DecisionCode =
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

/** Which backend failure left a decision degraded or refused. */
export type BackendFailure = Extract<DenyReason, 'backend_timeout' | 'backend_unavailable' | 'backend_error'>;

/** One window of one applicable policy, as DESIGN §3 shows it. */
export interface DecisionWindow {
  /** Window name, unique within its policy. */
  readonly name: string;
  /** `burst` or `sustained`: which deny reason this window produces. */
  readonly role: WindowRole;
  /** Units per period (token bucket: capacity). */
  readonly limit: number;
  /**
   * Units left after this decision (after the commit when allowed; untouched when denied), never
   * negative. Unknown in a degraded decision, where it is reported as the full limit.
   */
  readonly remaining: number;
  /** Milliseconds until the window is back to its full limit (0 when nothing is counted). */
  readonly reset_ms: number;
}

/** One applicable policy of a decision, in evaluation (file) order. */
export interface DecisionPolicy {
  /** Policy name. */
  readonly name: string;
  /** `enforce` policies can deny; `shadow` policies count and report `would_deny`, never deny. */
  readonly mode: PolicyMode;
  /** Shadow policies only: true when enforcing this policy would have denied the request. */
  readonly would_deny?: boolean;
  /** The policy's windows in declaration order. */
  readonly windows: readonly DecisionWindow[];
}

/** The window whose numbers belong in the `RateLimit-*` headers. */
export interface DecisionBinding {
  /** Policy name (`RateLimit-Name`). */
  readonly policy: string;
  /** Window name within the policy. */
  readonly window: string;
  readonly limit: number;
  readonly remaining: number;
  readonly reset_ms: number;
}

/**
 * The answer to one decision request. Every field except `status`, `binding`, `degraded_cause` and
 * `message` is the DESIGN §3 response body; those four are for the transport (status line, headers,
 * problem details) and the body may carry `degraded_cause` and `message` when set.
 */
export interface Decision {
  /** True when the caller may spend the cost now (also when degraded under fail_open). */
  readonly allowed: boolean;
  /** ULID of this decision; a replay returns the original decision's id. Equals the event id. */
  readonly decision_id: string;
  /** Why it was refused, from the fixed deny-reason vocabulary; `null` when allowed or for 409/413 and malformed input. */
  readonly reason: DenyReason | null;
  /** Machine-readable code of a refusal (`quota.exceeded`, …); `null` when allowed. */
  readonly code: DecisionCode | null;
  /** How long to wait before retrying (429: exact time until the cost fits; 503: a back-off); 0 when allowed. */
  readonly retry_after_ms: number;
  /**
   * True when the backend failed and a fail_open policy let the request through uncounted by the
   * windows; it still reaches the ledger (`DegradedLedger`) once Redis answers again.
   */
  readonly degraded: boolean;
  /** With `degraded`: which backend failure. */
  readonly degraded_cause?: BackendFailure;
  /** True when this is the stored decision of an earlier request with the same idempotency key. */
  readonly replayed: boolean;
  /** Every applicable policy; `[]` when no policy applies (allowed, counted as `unmatched`). */
  readonly policies: readonly DecisionPolicy[];
  /** HTTP status to return: 200, 429, 503, 400, 409 or 413. */
  readonly status: 200 | 400 | 409 | 413 | 429 | 503;
  /** The window for the `RateLimit-*` headers: the denying one, else the enforce window with the least left. */
  readonly binding: DecisionBinding | null;
  /** Human-readable detail of a 400/409/413 (never echoes a selector value). */
  readonly message?: string;
}
