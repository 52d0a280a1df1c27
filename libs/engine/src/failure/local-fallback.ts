import type { DecisionObserver } from '../decision-observer';
import type { EngineOptions } from '../engine.options';
import type { DecisionPlan, PlannedWindow } from '../plan/decision-plan';
import {
  backendDecision,
  localDecision,
  type LocalWindowNumbers,
  type WindowOverride,
} from '../plan/decision-result';
import type { BackendFailure, Decision } from '../plan/decision.types';
import { EngineLocalLimiter, type LocalCheck, type LocalLimiterOptions } from './local-limiter';
import type { HeldOverride } from '../overrides/override-copy';

/** What one `local_fallback` policy's part of a decision came to (a metric label). */
export type LocalFallbackOutcome = 'allowed' | 'denied' | 'blocked' | 'overflow_open' | 'overflow_closed';

/** Where the fallback finds the overrides while Redis does not answer (`OverridesCache`'s copy). */
export interface OverrideSource {
  /** The override in force of one policy of a decision: its shard and `overrideField`. */
  lookup(shard: number, field: string): HeldOverride | undefined;
}

/** A block without expiry waits a day, as decide.lua says: lifting it takes a person, not a wait. */
const BLOCK_RETRY_MS = 86_400_000;

/** Engines built without the setting (tests, tools) enforce the whole limit in one process. */
export const DEFAULT_LOCAL_FALLBACK: LocalLimiterOptions = { share: 1, maxKeys: 100_000 };

/**
 * The fallback of an engine's settings (`localFallback`, `clock`): built once by the engine module,
 * with this process's override copy, and by callers that build a `DecisionService` themselves.
 */
export function localFallbackOf(
  options: Pick<EngineOptions, 'localFallback' | 'clock'>,
  observer?: DecisionObserver,
  overrides?: OverrideSource,
): LocalFallback {
  return new LocalFallback(
    options.localFallback ?? DEFAULT_LOCAL_FALLBACK,
    options.clock ?? Date.now,
    observer,
    overrides,
  );
}

/**
 * `on_backend_failure: local_fallback` on the decision path: when a Redis step failed and no
 * applicable policy is fail_closed, the enforce policies that fall back locally are decided by this
 * process's `EngineLocalLimiter` (the others, fail_open or shadow, count nothing, as under fail_open).
 * The answer is `degraded` with the backend failure as its cause: allowed (counted locally), denied
 * with the window's deny reason (429), or, for a key beyond the bound, its policy's overflow mode.
 * The limiter is created on first use, so a process that never loses Redis holds nothing.
 *
 * Overrides (docs/semantics.md "Overrides") come from this process's copy (`OverrideSource`): a
 * blocked enforce policy refuses the decision with `blocked` / `quota.blocked` (429, degraded) under
 * `local_fallback` and `fail_open` alike, and the local counters enforce a share of the overridden
 * limits. A fail_closed policy still refuses every failed step with 503, block or not.
 */
export class LocalFallback {
  private limiter: EngineLocalLimiter | undefined;

  constructor(
    private readonly options: LocalLimiterOptions,
    private readonly clock: () => number,
    private readonly observer?: DecisionObserver,
    private readonly overrides?: OverrideSource,
  ) {}

  /** Keys held in memory now. */
  get size(): number {
    return this.limiter?.size ?? 0;
  }

  /** Whether a failed step of this plan is decided here rather than by the plain fail modes. */
  applies(plan: DecisionPlan): boolean {
    return !plan.failClosed && plan.policies.some(({ policy }) => fallsBackLocally(policy));
  }

  /**
   * Any plan whose Redis step failed with `cause`: fail_closed → 503; a block held in the copy → 429
   * `quota.blocked`; else the local counters (`applies`) or fail_open's uncounted allow.
   */
  decideFailed(plan: DecisionPlan, cause: BackendFailure): Decision {
    if (plan.failClosed) return backendDecision(plan, cause);
    const held = this.heldOverrides(plan);
    // A peek (cost 0) is not refused for a block, as the script answers it: it reports, never denies.
    const blocked = plan.policies.findIndex(
      ({ policy }, i) =>
        plan.cost > 0 && policy.mode === 'enforce' && held[i] !== undefined && held[i].limits === null,
    );
    if (blocked >= 0) return this.blocked(plan, cause, held, blocked);
    return this.applies(plan) ? this.decide(plan, cause, held) : backendDecision(plan, cause);
  }

  /** Decides a plan whose Redis step failed with `cause` (`applies` must hold) by the local counters. */
  decide(
    plan: DecisionPlan,
    cause: BackendFailure,
    held: readonly (HeldOverride | undefined)[] = this.heldOverrides(plan),
  ): Decision {
    this.limiter ??= new EngineLocalLimiter(this.options);
    const { checks, windows, overrides } = localChecks(plan, held);
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
      decision = localDecision(plan, cause, windows, numbers, binding, overrides);
    }
    const keys = this.limiter.size;
    for (const c of checks) this.observer?.onLocalFallback?.(c.window.policy.name, outcome, keys);
    return decision;
  }

  /** The override in force per applicable policy (in plan order), as the copy holds it. */
  private heldOverrides(plan: DecisionPlan): (HeldOverride | undefined)[] {
    const source = this.overrides;
    if (source === undefined) return [];
    return plan.overrideFields.map((field) => source.lookup(plan.shard.shard, field));
  }

  /**
   * The `blocked`-th policy is blocked: refused as decide.lua refuses it (its first window binds with
   * limit 0), degraded with the cause; nothing counted anywhere (a denial consumes nothing).
   */
  private blocked(
    plan: DecisionPlan,
    cause: BackendFailure,
    held: readonly (HeldOverride | undefined)[],
    blocked: number,
  ): Decision {
    const { overrides } = localChecks(plan, held);
    const expires = held[blocked]?.expiresAtMs ?? null;
    const retry = expires === null ? BLOCK_RETRY_MS : Math.max(1, expires - this.clock());
    const policy = plan.policies[blocked].policy;
    const own = plan.windows.filter((w) => w.policy === policy);
    const numbers = new Map<PlannedWindow, LocalWindowNumbers>(
      own.map((w) => [w, { allowed: false, remaining: 0, resetMs: retry, retryAfterMs: retry }]),
    );
    if (fallsBackLocally(policy)) this.observer?.onLocalFallback?.(policy.name, 'blocked', this.size);
    return localDecision(plan, cause, plan.windows, numbers, own[0], overrides);
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
 * descriptor's `limit` override included) at the limits of the override in force (`held`, per
 * policy), which the limiter then shares. Counters are per tenant, policy and key, as in Redis, and
 * survive a change of limit (a raise adds to what is left). Selector values carry no control
 * characters, so a newline cannot be forged into an id. `overrides`: each overridden window's
 * effective limit and version, for the answer.
 */
function localChecks(
  plan: DecisionPlan,
  held: readonly (HeldOverride | undefined)[],
): {
  checks: PlannedCheck[];
  windows: readonly PlannedWindow[];
  overrides: ReadonlyMap<PlannedWindow, WindowOverride>;
} {
  const checks: PlannedCheck[] = [];
  const overrides = new Map<PlannedWindow, WindowOverride>();
  let offset = 0;
  plan.policies.forEach(({ policy, key }, i) => {
    const count = policy.windows.length;
    const windows = plan.windows.slice(offset, offset + count);
    offset += count;
    const override = held[i];
    if (override !== undefined)
      for (const w of windows)
        overrides.set(w, {
          limit: override.limits?.[w.name] ?? (override.limits === null ? 0 : w.limit),
          version: override.version,
        });
    if (!fallsBackLocally(policy)) return;
    const id = `${plan.selectors.tenant ?? ''}\n${policy.name}\n${key}`;
    const limited = windows.map((w) => ({ ...w, limit: overrides.get(w)?.limit ?? w.limit }));
    checks.push({
      check: { id, windows: override === undefined ? windows : limited },
      windows,
      window: windows[0],
    });
  });
  return { checks, windows: plan.windows, overrides };
}
