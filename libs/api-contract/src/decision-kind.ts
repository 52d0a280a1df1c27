/**
 * What a decision amounts to, whatever carries it: the engine says which, and each transport maps it
 * in one table (HTTP: libs/http decision-status.ts; gRPC: libs/envoy-rls rls-response.mapper.ts).
 * - `allowed`: spend the cost now (also a degraded fail_open decision, and a replay);
 * - `denied`: refused by quota, nothing consumed, retry after `retry_after_ms`;
 * - `invalid`: a value the engine refuses (selector, cost, idempotency key);
 * - `too_large`: the cost is above what the applicable policies (or the global ceiling) allow;
 * - `conflict`: the idempotency key was used for a different request;
 * - `unavailable`: the backend failed under fail_closed; retry after `retry_after_ms`.
 */
export const DECISION_KINDS = [
  'allowed',
  'denied',
  'invalid',
  'too_large',
  'conflict',
  'unavailable',
] as const;
export type DecisionKind = (typeof DECISION_KINDS)[number];

/** Outcomes of the engine's other answers: the state endpoint adds `not_found` (no such policy). */
export type OutcomeKind = DecisionKind | 'not_found';
