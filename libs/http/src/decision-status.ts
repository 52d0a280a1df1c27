import type { OutcomeKind } from '@tally/api-contract';

/**
 * The one table from what the engine answered to the HTTP status line (the gRPC table is in
 * libs/envoy-rls). A quota denial is 429 and a fail_closed backend failure 503, both with Retry-After.
 */
export const HTTP_STATUS_OF = {
  allowed: 200,
  invalid: 400,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  denied: 429,
  unavailable: 503,
} as const satisfies Record<OutcomeKind, number>;

export type DecisionHttpStatus = (typeof HTTP_STATUS_OF)[OutcomeKind];
