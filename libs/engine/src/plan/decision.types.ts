import type { DenyReason } from '@tally/events';
import type { WindowSpec } from '@tally/policy';
import type { DecisionBody, DecisionKind, DecisionPolicy, RateLimitBinding } from '@tally/api-contract';

/**
 * A decision request as the transports hand it over: shape-checked by the contract's JSON Schema (or the gRPC
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
  /**
   * Envoy RLS only (the HTTP schema refuses unknown fields): policies match whole descriptors, i.e.
   * their `match` names ∪ `key` dims must be exactly the request's names (`selectPolicies`' `whole`).
   */
  readonly wholeDescriptor?: boolean;
  /**
   * Envoy RLS only: the descriptor's `limit` override. It replaces the windows of every applicable
   * policy for this decision (and bounds the cost as a window limit does); which policies apply, their
   * keys, mode and failure mode stay the policy file's.
   */
  readonly windowOverride?: WindowSpec;
}

/** Stable machine-readable outcome codes; `null` when allowed. Defined by the wire contract. */
export type { DecisionCode, DecisionPolicy, DecisionWindow } from '@tally/api-contract';

/** Which backend failure left a decision degraded or refused. */
export type BackendFailure = Extract<DenyReason, 'backend_timeout' | 'backend_unavailable' | 'backend_error'>;

/** The window whose numbers belong in the `RateLimit-*` headers. */
export type DecisionBinding = RateLimitBinding;

/**
 * The answer to one decision request: the wire body (`DecisionBody`, every field documented in
 * @tally/api-contract's schema) plus what only the transports read: what it amounts to (`kind`,
 * which each transport maps to its own status in one table) and the binding window for the headers.
 * The body carries `degraded_cause` and `message` when set.
 */
export interface Decision extends Readonly<Omit<DecisionBody, 'reason' | 'policies'>> {
  /** Why it was refused, from the fixed deny-reason vocabulary; `null` when allowed, for 409/413 and malformed input. */
  readonly reason: DenyReason | null;
  /** Every applicable policy; `[]` when no policy applies (allowed, counted as `unmatched`). */
  readonly policies: readonly DecisionPolicy[];
  /** What the decision amounts to, transport-neutral: allowed, denied, invalid, too_large, conflict, unavailable. */
  readonly kind: DecisionKind;
  /** The window for the `RateLimit-*` headers: the denying one, else the enforce window with the least left. */
  readonly binding: DecisionBinding | null;
}
