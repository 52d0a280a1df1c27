import type { ScriptOutcome } from './decide.script';
import type { DecisionPlan } from './plan/decision-plan';
import type { BackendFailure } from './plan/decision.types';

/** One Redis step's answer: its value, or the backend failure it came to (deadline, breaker, error). */
export type StepResult<T> =
  | { ok: true; value: T }
  | {
      ok: false;
      failure: BackendFailure;
      /**
       * Durable mode: the script replayed a stored decision but too few replicas acknowledged (see
       * `fallsShort`); the caller answers it by the plan's fail mode (`DecisionService`).
       */
      unacknowledgedReplay?: Extract<ScriptOutcome, { kind: 'replayed' }>;
    };

/** A peek of a plan's windows and each window's raw state in Redis (the state endpoint's read). */
export interface PlanState {
  readonly outcome: ScriptOutcome;
  /** Per planned window, in plan order: its state's fields (a concurrency window: lease → expiry). */
  readonly hashes: Record<string, string>[];
}

/**
 * The port `DecisionService` decides through (`DECISION_STORE`): runs a planned decision's one
 * script and answers what the backend said, or which of the three backend failures it came to.
 * The Redis store (`EngineService`) provides it; no business rule lives behind it, so a failed step
 * is answered by the use case (fail modes, local fallback, degraded ledger), not here.
 */
export interface DecisionStore {
  /** One decision, one step. */
  run(plan: DecisionPlan): Promise<StepResult<ScriptOutcome>>;
  /** Independent decisions in as few round trips as the backend allows; results in plan order. */
  runMany(plans: readonly DecisionPlan[]): Promise<StepResult<ScriptOutcome>[]>;
  /** A cost-0 peek of the plan's windows plus their raw state, consuming nothing. */
  peekWithState(plan: DecisionPlan): Promise<StepResult<PlanState>>;
}
