/**
 * Why a decision was denied (DESIGN §3; `blocked`: a runtime override of 0, docs/semantics.md "Overrides"). Exactly this vocabulary: callers, dashboards and the audit
 * trail match on these strings, so adding one is a contract change.
 */
export const DENY_REASONS = [
  'burst_quota_exhausted',
  'sustained_quota_exhausted',
  'selector_identity_missing',
  'selector_identity_invalid',
  'backend_timeout',
  'backend_unavailable',
  'backend_error',
  'blocked',
] as const;

export type DenyReason = (typeof DENY_REASONS)[number];

const REASONS: ReadonlySet<string> = new Set(DENY_REASONS);

export function isDenyReason(value: unknown): value is DenyReason {
  return typeof value === 'string' && REASONS.has(value);
}
