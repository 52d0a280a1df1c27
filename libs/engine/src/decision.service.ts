import { Inject, Injectable, Optional } from '@nestjs/common';
import { newDecisionId } from './plan/decision-id';
import type { DecisionObserver } from './decision-observer';
import { planDecision, type DecisionPlan, type PlanContext, type PlanResult } from './plan/decision-plan';
import { degradedReplayDecision, refusedDecision, scriptDecision } from './plan/decision-result';
import type { Decision, DecisionRequest } from './plan/decision.types';
import { DECISION_OBSERVER, DECISION_STORE, ENGINE_OPTIONS, POLICY_SET_SOURCE } from './engine.constants';
import { DEFAULT_MAX_COST, type EngineOptions, type PolicySetSource } from './engine.options';
import type { DecisionStore, StepResult } from './decision-store';
import type { ScriptOutcome } from './decide.script';
import { DegradedLedger } from './failure/degraded-ledger';
import { describeState, type PolicyStateResult } from './policy-state';
import { LocalFallback, localFallbackOf } from './failure/local-fallback';

/**
 * The decision use case (DESIGN §3): validate → plan → one script → answer. A request no policy
 * applies to is allowed with `policies: []`; with cost > 0 it still goes through the script, so its
 * idempotency and its usage event in the ledger work like any other (with cost 0 there is nothing to
 * peek and Redis is not asked). A degraded decision goes to the `DegradedLedger`, which appends it to
 * the outbox once Redis answers again. While Redis fails, `local_fallback` policies are enforced by
 * `LocalFallback` (this process's bounded counters), and blocks held in this process's override copy
 * (`OverridesCache`) still refuse; the next successful step is Redis's answer again.
 *
 * Its collaborators are wired by `EngineModule`: the store behind the `DecisionStore` port (Redis),
 * the degraded ledger, and the local fallback holding this process's override copy. Built by hand
 * (tests, tools), a missing fallback is the settings' own, without an override copy.
 */
@Injectable()
export class DecisionService {
  private readonly local: LocalFallback;

  constructor(
    @Inject(DECISION_STORE) private readonly store: DecisionStore,
    @Inject(POLICY_SET_SOURCE) private readonly policies: PolicySetSource,
    @Inject(ENGINE_OPTIONS) private readonly options: EngineOptions,
    @Optional() @Inject(DECISION_OBSERVER) private readonly observer?: DecisionObserver,
    @Optional() @Inject(DegradedLedger) private readonly degraded?: Pick<DegradedLedger, 'nudge' | 'record'>,
    @Optional() @Inject(LocalFallback) local?: LocalFallback,
  ) {
    this.local = local ?? localFallbackOf(options, observer);
  }

  /** Keys the local fallback limiter holds in memory now (`local_fallback` policies). */
  get localFallbackKeys(): number {
    return this.local.size;
  }

  /** `traceparent`: the caller's recorded span (tracing on), written into the outbox entry. */
  async decide(request: DecisionRequest, traceparent?: string): Promise<Decision> {
    const started = performance.now();
    const planned = this.plan(request, traceparent);
    const decision = !planned.ok
      ? refusedDecision(planned.decisionId, planned.refusal)
      : this.skipsRedis(planned.plan)
        ? scriptDecision(planned.plan, { kind: 'peek', nowMs: 0, retryAfterMs: 0, binding: 0, windows: [] })
        : this.answer(planned.plan, await this.store.run(planned.plan));
    this.observer?.onDecision?.(decision, performance.now() - started);
    return decision;
  }

  /** Independent decisions, every script in one pipeline (one round trip); results in request order. */
  async decideBatch(requests: readonly DecisionRequest[], traceparent?: string): Promise<Decision[]> {
    const started = performance.now();
    const planned = requests.map((r) => this.plan(r, traceparent));
    const toRun: DecisionPlan[] = [];
    for (const p of planned) if (p.ok && !this.skipsRedis(p.plan)) toRun.push(p.plan);
    // One script (Envoy's usual call: one descriptor) runs as the single command it is: a pipeline
    // of one costs its own objects, promise and reply tuples per call for the same round trip.
    const results =
      toRun.length === 0
        ? []
        : toRun.length === 1
          ? [await this.store.run(toRun[0])]
          : await this.store.runMany(toRun);
    let next = 0;
    const decisions = planned.map((p) => {
      if (!p.ok) return refusedDecision(p.decisionId, p.refusal);
      if (this.skipsRedis(p.plan))
        return scriptDecision(p.plan, { kind: 'peek', nowMs: 0, retryAfterMs: 0, binding: 0, windows: [] });
      return this.answer(p.plan, results[next++]);
    });
    const latency = performance.now() - started;
    for (const d of decisions) this.observer?.onDecision?.(d, latency);
    return decisions;
  }

  /** Read-only state of every window of one policy for the given selectors (control endpoint). */
  async state(policyName: string, rawSelectors: unknown): Promise<PolicyStateResult> {
    const policy = this.policies.current.policies.find((p) => p.name === policyName);
    if (!policy)
      return {
        ok: false,
        kind: 'not_found',
        code: 'policy.not_found',
        message: `no policy named ${policyName}`,
      };
    const planned = planDecision(
      { selectors: rawSelectors, cost: 0 },
      { ...this.context(newDecisionId()), only: policy },
    );
    if (!planned.ok)
      return {
        ok: false,
        kind: planned.refusal.kind,
        code: planned.refusal.code,
        message: planned.refusal.message,
      };
    const step = await this.store.peekWithState(planned.plan);
    if (!step.ok)
      return {
        ok: false,
        kind: 'unavailable',
        code: `backend.${step.failure.slice('backend_'.length)}`,
        message: step.failure,
      };
    return describeState(planned.plan, step.value.outcome, step.value.hashes);
  }

  private plan(request: DecisionRequest, traceparent?: string): PlanResult & { decisionId: string } {
    const decisionId = newDecisionId();
    return { ...planDecision(request, this.context(decisionId, traceparent)), decisionId };
  }

  private context(decisionId: string, traceparent?: string): PlanContext {
    return {
      traceparent,
      policySet: this.policies.current,
      tokenSecret: this.options.tokenSecret,
      shards: this.options.shards,
      maxCost: this.options.maxCost ?? DEFAULT_MAX_COST,
      decisionId,
    };
  }

  /** Cost 0 with no window to report: nothing to ask Redis. */
  private skipsRedis(plan: DecisionPlan): boolean {
    return plan.cost === 0 && plan.windows.length === 0;
  }

  private answer(plan: DecisionPlan, step: StepResult<ScriptOutcome>): Decision {
    if (step.ok) {
      this.degraded?.nudge();
      return scriptDecision(plan, step.value);
    }
    // Durable mode, a replay no replica acknowledged: fail_closed refuses it as the fresh decision
    // was refused (below); otherwise the stored decision, degraded, with nothing counted anew (not
    // even by the local fallback: a replay spends nothing).
    if (step.unacknowledgedReplay !== undefined && !plan.failClosed)
      return degradedReplayDecision(plan, step.unacknowledgedReplay, step.failure);
    // fail_closed → 503; a block in this process's override copy → 429; else local counters or fail_open.
    const decision = this.local.decideFailed(plan, step.failure);
    // Allowed while Redis failed (uncounted, or counted only here): owed to the ledger.
    if (decision.degraded && decision.allowed) this.degraded?.record(plan, step.failure);
    return decision;
  }
}
