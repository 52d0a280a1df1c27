/**
 * plan/: a decision before and after Redis, pure (no I/O): `planDecision` (validation, the policies
 * that apply, their keys, the outbox payload, the lease to take), the answer built from the script's
 * outcome or from a refusal (`decision-result.ts`), decision ids, the idempotency key rule, and the
 * decision's types.
 *
 * Does NOT own:
 * - running a plan: the Redis store behind the `DecisionStore` port (store/), called by `DecisionService`;
 * - the script's arguments and reply (`decide.script.ts`) or the window maths (`window-math.ts`);
 * - the key layout (store/keys.ts) and the lease record (leases/): it calls them;
 * - what a failed step answers (failure/: fail modes, local fallback, degraded ledger);
 * - the wire shapes (`@tally/api-contract`) and the outbox payload format (`@tally/events`).
 */
export { planDecision } from './decision-plan';
export type { DecisionPlan, PlanContext, PlanRefusal, PlanResult, PlannedWindow } from './decision-plan';
export { IDEMPOTENCY_KEY_RULE, MAX_IDEMPOTENCY_KEY_LENGTH, isIdempotencyKey } from './idempotency-key';
export type {
  BackendFailure,
  Decision,
  DecisionBinding,
  DecisionCode,
  DecisionPolicy,
  DecisionRequest,
  DecisionWindow,
} from './decision.types';
