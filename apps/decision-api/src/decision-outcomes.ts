import type { Decision, DecisionPolicy } from '@tally/engine';

/**
 * The labels a decision is counted under: once as a whole (`tally_decisions_total`, what the caller
 * was answered) and once per applicable policy (`tally_policy_decisions_total`, what that policy
 * said). Fixed vocabularies and policy names only, never a selector value: cardinality stays bounded
 * by the policy file.
 */

/** What the caller was answered. */
export type DecisionOutcome = 'allowed' | 'denied' | 'degraded' | 'replayed' | 'refused';

/**
 * What one policy said of a decision:
 * - `allowed`: the decision was allowed and this policy counted it (a shadow policy: would have allowed);
 * - `denied`: this policy's window is the one the denial names (enforce policies only);
 * - `denied_by_other`: another policy denied the decision; nothing was counted here;
 * - `would_deny`: a shadow policy that would have denied (it never denies);
 * - `degraded`: Redis failed and the decision was allowed without this policy's Redis counters;
 * - `replayed`: an idempotent replay, nothing evaluated;
 * - `refused`: the decision was refused before an answer on quota (503 under fail_closed, bad input).
 */
export type PolicyOutcome =
  'allowed' | 'denied' | 'denied_by_other' | 'would_deny' | 'degraded' | 'replayed' | 'refused';

/** `reason` of an allowed decision that no policy applied to (DESIGN §3: counted as unmatched). */
export const UNMATCHED = 'unmatched';

export interface DecisionLabels {
  readonly outcome: DecisionOutcome;
  /** The deny reason, else the degraded cause, else the refusal code; `unmatched`; '' when allowed. */
  readonly reason: string;
}

export function decisionLabels(decision: Decision): DecisionLabels {
  const outcome = decisionOutcome(decision);
  const reason = decision.reason ?? decision.degraded_cause ?? decision.code ?? '';
  if (reason === '' && decision.allowed && decision.policies.length === 0)
    return { outcome, reason: UNMATCHED };
  return { outcome, reason };
}

function decisionOutcome(decision: Decision): DecisionOutcome {
  if (decision.replayed) return 'replayed';
  // A local_fallback denial is degraded (not from Redis) but a denial all the same.
  if (decision.degraded) return decision.allowed ? 'degraded' : 'denied';
  if (decision.allowed) return 'allowed';
  return decision.kind === 'denied' ? 'denied' : 'refused';
}

export function policyOutcome(decision: Decision, policy: DecisionPolicy): PolicyOutcome {
  if (decision.replayed) return 'replayed';
  if (decision.kind !== 'allowed' && decision.kind !== 'denied') return 'refused';
  // Shadow policies are not evaluated while Redis fails (the local fallback enforces enforce ones only).
  if (policy.mode === 'shadow')
    return decision.degraded ? 'degraded' : policy.would_deny ? 'would_deny' : 'allowed';
  if (decision.kind === 'denied')
    // The denial names one window (the longest wait of the denying ones): its policy denied.
    return decision.binding?.policy === policy.name ? 'denied' : 'denied_by_other';
  return decision.degraded ? 'degraded' : 'allowed';
}
