import { degradedPayload } from '@tally/events';
import type { DecisionPlan } from '../plan/decision-plan';
import type { BackendFailure } from '../plan/decision.types';
import { degradedMarkerKey } from '../store/keys';

/**
 * One degraded decision (allowed under fail_open while Redis failed) waiting to be appended to its
 * shard's outbox, exactly as decide.lua would have appended it had it run: `p` the payload, `t` the
 * decision time, `r` the window results (none: no script ran, so no window state is known).
 */
export interface DegradedEntry {
  /** The decision id (ULID), also the payload's `id` and so the event ids: downstream dedups by it. */
  readonly decisionId: string;
  /** Hash-tag shard of the decision; entries of one shard share one outbox stream (and one slot). */
  readonly shard: number;
  /** The shard's outbox stream, `tally:v1:{s<N>}:outbox`. */
  readonly outbox: string;
  /** Its append marker, `tally:v1:{s<N>}:degraded:<decision id>` (see degraded-append.lua). */
  readonly marker: string;
  /** Field `p`: the allowed payload of the plan with `outcome: 'degraded'` and `degraded_cause`. */
  readonly payload: string;
  /**
   * Field `t`: the API's local wall-clock time of the decision, epoch ms. Redis time is what allowed
   * decisions carry, but it is unavailable by definition here; replicas' clocks may differ a little.
   */
  readonly timeMs: number;
}

/**
 * The entry of a degraded decision. The payload is the plan's allowed payload with its prefix swapped
 * (as decide.lua derives a denial's), so selectors, attributes, cost, idempotency key and policies are
 * byte for byte what an allowed decision of this request would have carried.
 */
export function degradedEntry(plan: DecisionPlan, cause: BackendFailure, timeMs: number): DegradedEntry {
  const payload = degradedPayload(plan.payloadJson, cause);
  return {
    decisionId: plan.decisionId,
    shard: plan.shard.shard,
    outbox: plan.shard.outbox,
    marker: degradedMarkerKey(plan.shard, plan.decisionId),
    payload,
    timeMs,
  };
}
