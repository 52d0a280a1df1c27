import type { OutboxPayload } from '@tally/events';
import type { DecisionPlan, PlannedWindow, PlanRefusal } from './decision-plan';
import type {
  BackendFailure,
  Decision,
  DecisionBinding,
  DecisionCode,
  DecisionPolicy,
  DecisionWindow,
} from './decision.types';
import type { ScriptOutcome, ScriptWindow } from '../decide.script';
import { leaseIdOf } from '../store/keys';

/** Pure mapping from a plan and what the script said (or why it could not say) to a `Decision`. */

/** A 503 says "come back later"; one second is the smallest Retry-After HTTP can express. */
export const BACKEND_RETRY_AFTER_MS = 1000;

const BACKEND_CODES: Record<BackendFailure, DecisionCode> = {
  backend_timeout: 'backend.timeout',
  backend_unavailable: 'backend.unavailable',
  backend_error: 'backend.error',
};

export function refusedDecision(decisionId: string, refusal: PlanRefusal): Decision {
  return {
    allowed: false,
    decision_id: decisionId,
    reason: refusal.reason,
    code: refusal.code,
    retry_after_ms: 0,
    degraded: false,
    replayed: false,
    policies: [],
    kind: refusal.kind,
    binding: null,
    message: refusal.message,
  };
}

export function scriptDecision(plan: DecisionPlan, outcome: ScriptOutcome): Decision {
  const base = { decision_id: plan.decisionId, degraded: false, replayed: false };
  switch (outcome.kind) {
    case 'conflict':
      return {
        ...base,
        allowed: false,
        reason: null,
        code: 'idempotency.conflict',
        retry_after_ms: 0,
        policies: [],
        kind: 'conflict',
        binding: null,
        message: 'idempotency_key was already used by a different request',
      };
    case 'replayed': {
      const decision = replayedDecision(outcome.storedPayload, outcome.windows);
      if (outcome.leaseExpiresAt === undefined) return decision;
      const id = leaseIdOf(plan.shard.shard, decision.decision_id);
      return { ...decision, lease: leaseOf(id, outcome.leaseExpiresAt, outcome.nowMs) };
    }
    case 'allowed':
    case 'peek': {
      const policies = describe(plan, outcome.windows);
      const decision: Decision = {
        ...base,
        allowed: true,
        reason: null,
        code: null,
        retry_after_ms: 0,
        policies,
        kind: 'allowed',
        binding: leastLeft(policies),
      };
      if (outcome.kind === 'peek' || outcome.leaseExpiresAt === undefined || plan.lease === undefined)
        return decision;
      return { ...decision, lease: leaseOf(plan.lease.id, outcome.leaseExpiresAt, outcome.nowMs) };
    }
    case 'denied': {
      const policies = describe(plan, outcome.windows);
      const w = plan.windows[outcome.binding - 1];
      const result = outcome.windows[outcome.binding - 1];
      // An override of 0 blocks: its own reason and code (decide.lua makes the blocked window bind).
      const blocked = result.override?.limit === 0;
      return {
        ...base,
        allowed: false,
        reason: blocked
          ? 'blocked'
          : w.role === 'burst'
            ? 'burst_quota_exhausted'
            : 'sustained_quota_exhausted',
        code: blocked ? 'quota.blocked' : 'quota.exceeded',
        retry_after_ms: outcome.retryAfterMs,
        policies,
        kind: 'denied',
        binding: {
          policy: w.policy.name,
          window: w.name,
          limit: result.override?.limit ?? w.limit,
          remaining: result.remaining,
          reset_ms: result.resetMs,
        },
      };
    }
  }
}

/**
 * The backend failed. fail_closed anywhere → 503 with the cause; otherwise allowed uncounted,
 * `degraded: true`. Window numbers are unknown and reported as the full limit.
 */
export function backendDecision(
  plan: DecisionPlan,
  cause: BackendFailure,
  refuse: boolean = plan.failClosed,
): Decision {
  const unknown = plan.windows.map((w) => ({ remaining: w.limit, resetMs: 0, wouldDeny: false }));
  const policies = describe(plan, unknown);
  const base = { decision_id: plan.decisionId, replayed: false, policies, binding: null };
  if (refuse) {
    return {
      ...base,
      allowed: false,
      reason: cause,
      code: BACKEND_CODES[cause],
      retry_after_ms: BACKEND_RETRY_AFTER_MS,
      degraded: false,
      kind: 'unavailable',
    };
  }
  return {
    ...base,
    allowed: true,
    reason: null,
    code: null,
    retry_after_ms: 0,
    degraded: true,
    degraded_cause: cause,
    kind: 'allowed',
  };
}

/**
 * Durable mode, a replay too few replicas acknowledged under a plan that is not fail_closed: the
 * stored decision (its id, `replayed: true`), `degraded` with the cause, as a fresh fail_open
 * decision that fell short is allowed `degraded`. Nothing new is owed to the ledger: the replay
 * spent nothing, and the charge it answers for is the stored decision's own.
 */
export function degradedReplayDecision(
  plan: DecisionPlan,
  outcome: Extract<ScriptOutcome, { kind: 'replayed' }>,
  cause: BackendFailure,
): Decision {
  return { ...scriptDecision(plan, outcome), degraded: true, degraded_cause: cause };
}

/** The lease of an allowed decision as the wire shows it. */
function leaseOf(id: string, expiresAtMs: number, nowMs: number): NonNullable<Decision['lease']> {
  return { id, expires_at: new Date(expiresAtMs).toISOString(), ttl_ms: Math.max(0, expiresAtMs - nowMs) };
}

/** What the local fallback limiter said of one window (`WindowResult` fits). */
export interface LocalWindowNumbers {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetMs: number;
  readonly retryAfterMs: number;
}

/** An override in force for one window, as the local fallback applied it (0: the key is blocked). */
export interface WindowOverride {
  readonly limit: number;
  readonly version: number;
}

/**
 * Decided by the local fallback limiter (`local-fallback.ts`) while Redis failed with `cause`: always
 * `degraded` with that cause. Windows it evaluated report their numbers against this process's share
 * of the limit; the others (fail_open or shadow policies) are unknown, reported at their full limit.
 * `overrides`: the overrides this process's copy held, shown as the script shows them (effective
 * limit, the policy's override version). `binding`: the denying window, when denied (429 with its
 * role's reason, as the script denies; `blocked` / `quota.blocked` when its override is 0).
 */
export function localDecision(
  plan: DecisionPlan,
  cause: BackendFailure,
  windows: readonly PlannedWindow[],
  numbers: ReadonlyMap<PlannedWindow, LocalWindowNumbers>,
  binding: PlannedWindow | undefined,
  overrides: ReadonlyMap<PlannedWindow, WindowOverride> = new Map(),
): Decision {
  const results = windows.map((w) => {
    const n = numbers.get(w);
    const override = overrides.get(w);
    return {
      remaining: n?.remaining ?? override?.limit ?? w.limit,
      resetMs: n?.resetMs ?? 0,
      wouldDeny: false,
      ...(override !== undefined && { override }),
    };
  });
  const policies = describe(plan, results);
  const base = {
    decision_id: plan.decisionId,
    replayed: false,
    policies,
    degraded: true,
    degraded_cause: cause,
  };
  const denied = binding === undefined ? undefined : numbers.get(binding);
  if (binding === undefined || denied === undefined)
    return {
      ...base,
      allowed: true,
      reason: null,
      code: null,
      retry_after_ms: 0,
      kind: 'allowed',
      binding: leastLeft(policies),
    };
  const limit = overrides.get(binding)?.limit ?? binding.limit;
  return {
    ...base,
    allowed: false,
    reason:
      limit === 0
        ? 'blocked'
        : binding.role === 'burst'
          ? 'burst_quota_exhausted'
          : 'sustained_quota_exhausted',
    code: limit === 0 ? 'quota.blocked' : 'quota.exceeded',
    retry_after_ms: denied.retryAfterMs,
    kind: 'denied',
    binding: {
      policy: binding.policy.name,
      window: binding.name,
      limit,
      remaining: denied.remaining,
      reset_ms: denied.resetMs,
    },
  };
}

function describe(plan: DecisionPlan, results: readonly ScriptWindow[]): DecisionPolicy[] {
  let i = 0;
  return plan.policies.map(({ policy }) => {
    let wouldDeny = false;
    let override: { version: number } | undefined;
    const windows: DecisionWindow[] = policy.windows.map((w) => {
      const r = results[i++];
      wouldDeny ||= r.wouldDeny;
      if (r.override !== undefined) override = { version: r.override.version };
      const limit = r.override?.limit ?? w.limit;
      return { name: w.name, role: w.role, limit, remaining: r.remaining, reset_ms: r.resetMs };
    });
    const described: DecisionPolicy =
      policy.mode === 'shadow'
        ? { name: policy.name, mode: policy.mode, would_deny: wouldDeny, windows }
        : { name: policy.name, mode: policy.mode, windows };
    return override === undefined ? described : { ...described, override };
  });
}

/** For RateLimit headers of an allowed decision: the enforce window with the least left (ties: later reset). */
function leastLeft(policies: readonly DecisionPolicy[]): DecisionBinding | null {
  let best: DecisionBinding | null = null;
  for (const p of policies) {
    if (p.mode !== 'enforce') continue;
    for (const w of p.windows) {
      if (
        best === null ||
        w.remaining < best.remaining ||
        (w.remaining === best.remaining && w.reset_ms > best.reset_ms)
      ) {
        best = {
          policy: p.name,
          window: w.name,
          limit: w.limit,
          remaining: w.remaining,
          reset_ms: w.reset_ms,
        };
      }
    }
  }
  return best;
}

/**
 * A replay answers with the stored decision: its id and its policies as they were when it was
 * decided (the stored payload), even if the policy set changed since.
 */
function replayedDecision(storedPayload: string, results: readonly ScriptWindow[]): Decision {
  const payload = JSON.parse(storedPayload) as OutboxPayload;
  let i = 0;
  const policies: DecisionPolicy[] = payload.policies.map((p) => {
    let wouldDeny = false;
    const windows = p.windows.map((w) => {
      const r = results[i++] ?? { remaining: w.limit, resetMs: 0, wouldDeny: false };
      wouldDeny ||= r.wouldDeny;
      return { name: w.name, role: w.role, limit: w.limit, remaining: r.remaining, reset_ms: r.resetMs };
    });
    return p.mode === 'shadow'
      ? { name: p.name, mode: p.mode, would_deny: wouldDeny, windows }
      : { name: p.name, mode: p.mode, windows };
  });
  return {
    allowed: true,
    decision_id: payload.id,
    reason: null,
    code: null,
    retry_after_ms: 0,
    degraded: false,
    replayed: true,
    policies,
    kind: 'allowed',
    binding: leastLeft(policies),
  };
}
