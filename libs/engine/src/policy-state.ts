import type { Algorithm, PolicyMode, WindowRole } from '@tally/policy';
import { ALGORITHM_REGISTRY } from './algorithms/registry';
import type { ScriptOutcome } from './decide.script';
import type { DecisionPlan } from './plan/decision-plan';

/** What `GET /v1/policies/{name}/state` shows for one window: its counters as the engine sees them. */
export interface WindowStateView {
  readonly name: string;
  readonly role: WindowRole;
  readonly algorithm: Algorithm;
  /** The limit in force: the policy's, or a runtime override's while one is. */
  readonly limit: number;
  readonly period_ms: number;
  /** `gcra` only: how many units may pass at once. */
  readonly burst?: number;
  /** Units left now. */
  readonly remaining: number;
  /** Milliseconds until the window is back to its full limit. */
  readonly reset_ms: number;
  /**
   * The counters as stored: `bucket` + `count` (fixed/calendar), `bucket` + `current`/`previous`
   * (sliding), `tokens` + `updated_ms` (token bucket, fractional tokens), `leases` + `units` of the
   * live leases (concurrency; expired ones not yet reclaimed are left out). A stored bucket older than the
   * current one no longer counts (`remaining` says what does). Empty when nothing is counted.
   */
  readonly counters: Readonly<Record<string, number>>;
}

export interface PolicyStateView {
  readonly policy: string;
  readonly mode: PolicyMode;
  /** The composite key value the selectors map to. */
  readonly key: string;
  /** Redis time of the reading, epoch ms. */
  readonly now_ms: number;
  readonly windows: readonly WindowStateView[];
}

export type PolicyStateResult =
  | { readonly ok: true; readonly state: PolicyStateView }
  | {
      readonly ok: false;
      /** `not_found`: no policy of that name; else what the planned peek amounts to. */
      readonly kind: 'not_found' | 'invalid' | 'too_large' | 'unavailable';
      readonly code: string;
      readonly message: string;
    };

export function describeState(
  plan: DecisionPlan,
  outcome: ScriptOutcome,
  hashes: readonly Record<string, string>[],
): PolicyStateResult {
  if (outcome.kind !== 'peek') throw new Error(`state: expected a peek, got ${outcome.kind}`);
  const { policy, key } = plan.policies[0];
  const windows = plan.windows.map((w, i): WindowStateView => {
    const r = outcome.windows[i];
    return {
      name: w.name,
      role: w.role,
      algorithm: w.algorithm,
      ...(w.burst !== undefined && { burst: w.burst }),
      // The limit in force: an override's when one is (the remaining above is counted against it).
      limit: r.override?.limit ?? w.limit,
      period_ms: w.periodMs,
      remaining: r.remaining,
      reset_ms: r.resetMs,
      counters: counters(w.algorithm, w.periodMs, hashes[i] ?? {}, outcome.nowMs),
    };
  });
  return { ok: true, state: { policy: policy.name, mode: policy.mode, key, now_ms: outcome.nowMs, windows } };
}

function counters(
  algorithm: Algorithm,
  periodMs: number,
  hash: Record<string, string>,
  nowMs: number,
): Record<string, number> {
  if (Object.keys(hash).length === 0) return {};
  // A concurrency window's hash here is its sorted set (member → expiry); the others', their fields.
  if (algorithm === 'concurrency') return liveLeases(hash, nowMs);
  return ALGORITHM_REGISTRY[algorithm].counters(hash, periodMs);
}

/** A concurrency window's sorted set, read as member → expiry: its live leases and their units. */
function liveLeases(members: Record<string, string>, nowMs: number): Record<string, number> {
  let leases = 0;
  let units = 0;
  for (const [member, expiry] of Object.entries(members)) {
    const bar = member.lastIndexOf('|');
    if (member === '#' || bar < 0 || Number(expiry) <= nowMs) continue;
    leases += 1;
    units += Number(member.slice(bar + 1));
  }
  return { leases, units };
}
