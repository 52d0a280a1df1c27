import type { DecisionObserver } from './decision-observer';
import type { DecisionPlan, PlannedWindow } from './decision-plan';
import { backendDecision, localDecision, type LocalWindowNumbers } from './decision-result';
import type { BackendFailure, Decision } from './decision.types';
import { LocalLimiter, type LocalCheck, type LocalLimiterOptions } from './local-limiter';

/** What one `local_fallback` policy's part of a decision came to (a metric label). */
export type LocalFallbackOutcome = 'allowed' | 'denied' | 'overflow_open' | 'overflow_closed';

/** Engines built without the setting (tests, tools) enforce the whole limit in one process. */
export const DEFAULT_LOCAL_FALLBACK: LocalLimiterOptions = { share: 1, maxKeys: 100_000 };

/**
 * `on_backend_failure: local_fallback` on the decision path: when a Redis step failed and no
 * applicable policy is fail_closed, the enforce policies that fall back locally are decided by this
 * process's `LocalLimiter` (the others, fail_open or shadow, count nothing, as under fail_open).
 * The answer is `degraded` with the backend failure as its cause: allowed (counted locally), denied
 * with the window's deny reason (429), or, for a key beyond the bound, its policy's overflow mode.
 * The limiter is created on first use, so a process that never loses Redis holds nothing.
 */
export class LocalFallback {
  private limiter: LocalLimiter | undefined;

  constructor(
    private readonly options: LocalLimiterOptions,
    private readonly clock: () => number,
    private readonly observer?: DecisionObserver,
  ) {}

  /** Keys held in memory now. */
  get size(): number {
    return this.limiter?.size ?? 0;
  }

  /** Whether a failed step of this plan is decided here rather than by the plain fail modes. */
  applies(plan: DecisionPlan): boolean {
    return !plan.failClosed && plan.policies.some(({ policy }) => fallsBackLocally(policy));
  }

  /** Decides a plan whose Redis step failed with `cause` (`applies` must hold). */
  decide(plan: DecisionPlan, cause: BackendFailure): Decision {
    this.limiter ??= new LocalLimiter(this.options);
    const { checks, windows } = localChecks(plan);
    const verdict = this.limiter.decide(
      checks.map((c) => c.check),
      plan.cost,
      this.clock(),
    );
    let decision: Decision;
    let outcome: LocalFallbackOutcome;
    if (verdict.kind === 'overflow') {
      // Nothing was counted: a new key that found no room is answered as its policy's overflow says,
      // and the refusal of any one of them refuses the decision (policies AND).
      const refuse = verdict.fresh.some((i) => overflowOf(checks[i].window.policy) === 'overflow_closed');
      outcome = refuse ? 'overflow_closed' : 'overflow_open';
      decision = backendDecision(plan, cause, refuse);
      if (refuse) decision = { ...decision, message: 'local fallback: the in-memory key bound is reached' };
    } else {
      outcome = verdict.kind;
      const numbers = new Map<PlannedWindow, LocalWindowNumbers>();
      checks.forEach((c, i) => c.windows.forEach((w, j) => numbers.set(w, verdict.results[i][j])));
      const binding = verdict.kind === 'denied' ? checks[verdict.check].windows[verdict.window] : undefined;
      decision = localDecision(plan, cause, windows, numbers, binding);
    }
    const keys = this.limiter.size;
    for (const c of checks) this.observer?.onLocalFallback?.(c.window.policy.name, outcome, keys);
    return decision;
  }
}

function fallsBackLocally(policy: PlannedWindow['policy']): boolean {
  return policy.mode === 'enforce' && policy.onBackendFailure === 'local_fallback';
}

function overflowOf(policy: PlannedWindow['policy']): LocalFallbackOutcome {
  return policy.localFallbackOverflow === 'fail_open' ? 'overflow_open' : 'overflow_closed';
}

interface PlannedCheck {
  readonly check: LocalCheck;
  /** The policy's planned windows, in order (the first names the policy). */
  readonly windows: readonly PlannedWindow[];
  readonly window: PlannedWindow;
}

/**
 * One check per enforce local_fallback policy of the plan, over its planned windows (an Envoy
 * descriptor's `limit` override included). Counters are per tenant, policy and key, as in Redis.
 * Selector values carry no control characters, so a newline cannot be forged into an id.
 */
function localChecks(plan: DecisionPlan): { checks: PlannedCheck[]; windows: readonly PlannedWindow[] } {
  const checks: PlannedCheck[] = [];
  let offset = 0;
  for (const { policy, key } of plan.policies) {
    const count = policy.windows.length;
    const windows = plan.windows.slice(offset, offset + count);
    offset += count;
    if (!fallsBackLocally(policy)) continue;
    const id = `${plan.selectors.tenant ?? ''}\n${policy.name}\n${key}`;
    checks.push({ check: { id, windows }, windows, window: windows[0] });
  }
  return { checks, windows: plan.windows };
}
