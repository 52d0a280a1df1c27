import { evaluateWindow, type WindowState } from '@tally/engine';
import { overrideId, type ProposedOverride } from './proposed-overrides';
import { keyOf, selectPolicies, type NormalizedSelectors, type Policy, type PolicySet } from '@tally/policy';
import type { RecordedDecision } from './recorded-decision';

/** Decisions a policy applied to, and how many of them it allowed or (would have) denied. */
export interface PolicyTally {
  readonly applied: number;
  readonly allowed: number;
  readonly denied: number;
}

export interface PolicyImpact {
  readonly policy: string;
  /** In the proposed set / among the policies recorded in the events. */
  readonly proposed: boolean;
  readonly recorded: boolean;
  /** What happened (from the events). */
  readonly actual: PolicyTally;
  /** What the proposed policies would have done. Shadow policies count would-denies as denied. */
  readonly simulated: PolicyTally;
}

export interface SimulationReport {
  /** Decisions evaluated (a coalesced event of N denials counts N). */
  readonly decisions: number;
  readonly actual: { readonly allowed: number; readonly denied: number };
  readonly simulated: { readonly allowed: number; readonly denied: number };
  /** Decisions whose outcome would change. */
  readonly changed: { readonly allowedToDenied: number; readonly deniedToAllowed: number };
  readonly policies: readonly PolicyImpact[];
}

type Counter = { applied: number; allowed: number; denied: number };
const zero = (): Counter => ({ applied: 0, allowed: 0, denied: 0 });

/**
 * Re-evaluates recorded decisions under a proposed policy set with the engine's pure logic
 * (`selectPolicies`, `keyOf`, `evaluateWindow`), keeping window state in memory. It mirrors the
 * decision script: an enforce window that denies denies the decision and nothing is committed; an
 * allowed decision commits every enforce window and each shadow policy whose windows all allow;
 * cost 0 commits nothing. Decisions must be added in event time order (`byTimeThenId`): the result
 * is then a pure function of the events, so two runs over the same range agree.
 *
 * The windows start empty at the first event: a proposed long window only sees usage from the start
 * of the simulated range.
 */
export class PolicySimulator {
  private readonly state = new Map<string, WindowState>();
  private readonly actual = new Map<string, Counter>();
  private readonly simulated = new Map<string, Counter>();
  private readonly totals = { decisions: 0, actualAllowed: 0, simAllowed: 0, a2d: 0, d2a: 0 };

  /** Proposed runtime overrides by `overrideId`: their limits replace the windows' as decide.lua's do. */
  private readonly overrides: ReadonlyMap<string, ProposedOverride>;

  constructor(
    private readonly proposed: PolicySet,
    overrides: readonly ProposedOverride[] = [],
  ) {
    this.overrides = new Map(overrides.map((o) => [overrideId(o.policy, o.tenant, o.key), o]));
  }

  add(decision: RecordedDecision): void {
    const actuallyAllowed = decision.outcome !== 'denied';
    this.recordActual(decision, decision.count);
    for (let i = 0; i < decision.count; i++) {
      const allowed = this.evaluate(decision, 1);
      if (!allowed && i + 1 < decision.count) {
        // A denial changes no state, so the identical requests of the same instant deny too.
        this.evaluate(decision, decision.count - i - 1);
        this.tallyOutcome(actuallyAllowed, false, decision.count - i);
        return;
      }
      this.tallyOutcome(actuallyAllowed, allowed, 1);
    }
  }

  report(): SimulationReport {
    const names = [
      ...this.proposed.policies.map((p) => p.name),
      ...[...this.actual.keys()].filter((n) => !this.proposed.policies.some((p) => p.name === n)).sort(),
    ];
    const t = this.totals;
    return {
      decisions: t.decisions,
      actual: { allowed: t.actualAllowed, denied: t.decisions - t.actualAllowed },
      simulated: { allowed: t.simAllowed, denied: t.decisions - t.simAllowed },
      changed: { allowedToDenied: t.a2d, deniedToAllowed: t.d2a },
      policies: [...new Set(names)].map((policy) => ({
        policy,
        proposed: this.proposed.policies.some((p) => p.name === policy),
        recorded: this.actual.has(policy),
        actual: { ...(this.actual.get(policy) ?? zero()) },
        simulated: { ...(this.simulated.get(policy) ?? zero()) },
      })),
    };
  }

  private tallyOutcome(actuallyAllowed: boolean, allowed: boolean, n: number): void {
    const t = this.totals;
    t.decisions += n;
    if (actuallyAllowed) t.actualAllowed += n;
    if (allowed) t.simAllowed += n;
    if (actuallyAllowed && !allowed) t.a2d += n;
    if (!actuallyAllowed && allowed) t.d2a += n;
  }

  private recordActual(decision: RecordedDecision, n: number): void {
    const denied = decision.outcome === 'denied';
    // Which enforce policy denied: the one whose window said so; without window results (a refusal
    // before any window ran) the first enforce policy stands for the decision.
    const firstEnforce = decision.policies.find((p) => p.mode === 'enforce');
    const anyRecorded = decision.policies.some((p) => p.wouldDeny.some((w) => w !== undefined));
    for (const policy of decision.policies) {
      const wouldDeny = policy.wouldDeny.some((w) => w === true);
      const policyDenied =
        policy.mode === 'shadow' ? wouldDeny : denied && (anyRecorded ? wouldDeny : policy === firstEnforce);
      bump(this.actual, policy.name, policyDenied, n);
    }
  }

  /** Evaluates `n` identical requests at once (n > 1 only for requests known to deny). Returns allowed. */
  private evaluate(decision: RecordedDecision, n: number): boolean {
    const selectors = decision.selectors as NormalizedSelectors;
    const attributes = decision.attributes;
    const applicable: { policy: Policy; key: string }[] = [];
    let refused = false;
    for (const policy of selectPolicies(this.proposed, selectors, attributes)) {
      const key = keyOf(policy, selectors, attributes);
      if (key.ok) applicable.push({ policy, key: key.value });
      else if (policy.mode === 'enforce') {
        // selector_identity_missing: refused before any window (shadow policies just skip).
        bump(this.simulated, policy.name, true, n);
        refused = true;
      }
    }
    const maxCost = maxCostOf(applicable.map((a) => a.policy));
    if (decision.cost > maxCost) {
      for (const { policy } of applicable)
        bump(this.simulated, policy.name, policyMaxCost(policy) < decision.cost, n);
      return false;
    }
    if (refused) {
      for (const { policy } of applicable) bump(this.simulated, policy.name, false, n);
      return false;
    }
    const scope = decision.selectors.tenant ?? '';
    const evaluated = applicable.map(({ policy, key }) => {
      const limits = this.overrides.get(overrideId(policy.name, decision.selectors.tenant, key))?.limits;
      // As decide.lua: a 0 anywhere blocks the key (every window denies, nothing counted).
      if (limits !== undefined && Object.values(limits).includes(0))
        return { policy, windows: [], denies: true };
      const windows = policy.windows.map((spec) => {
        const w = limits?.[spec.name] === undefined ? spec : { ...spec, limit: limits[spec.name] };
        const id = `${policy.name}\u0000${w.name}\u0000${scope}\u0000${key}`;
        const result = evaluateWindow(w, this.state.get(id) ?? {}, decision.timeMs, decision.cost);
        return { id, result };
      });
      return { policy, windows, denies: windows.some((w) => !w.result.allowed) };
    });
    const allowed = !evaluated.some((e) => e.policy.mode === 'enforce' && e.denies);
    for (const e of evaluated) {
      bump(this.simulated, e.policy.name, e.denies, n);
      if (!allowed || e.denies || decision.cost === 0) continue;
      for (const w of e.windows) this.state.set(w.id, w.result.nextState);
    }
    return allowed;
  }
}

function bump(map: Map<string, Counter>, name: string, denied: boolean, n: number): void {
  const counter = map.get(name) ?? zero();
  counter.applied += n;
  if (denied) counter.denied += n;
  else counter.allowed += n;
  map.set(name, counter);
}

/** As the engine plans: max_cost, and for enforce policies their smallest limit (413 above it). */
function policyMaxCost(policy: Policy): number {
  if (policy.mode === 'shadow') return policy.maxCost;
  return Math.min(policy.maxCost, ...policy.windows.map((w) => w.limit));
}

function maxCostOf(policies: readonly Policy[]): number {
  return Math.min(Number.MAX_SAFE_INTEGER, ...policies.map(policyMaxCost));
}
