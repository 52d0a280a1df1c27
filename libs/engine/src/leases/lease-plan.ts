import { leasePayloadJson } from '@tally/events';
import type { NormalizedSelectors } from '@tally/policy';
import { leaseIdOf, leaseKey, type ShardKeys } from '../store/keys';

/** What decide.lua needs to take a lease, planned before the script runs (pure). */
export interface PlannedLease {
  /** `s<shard>-<decision id>` (`leaseIdOf`). */
  readonly id: string;
  /** The lease record (`leaseKey`), same slot as the windows. */
  readonly redisKey: string;
  /** The release event's payload (@tally/events `LeasePayload`), kept in the record for release.lua. */
  readonly payloadJson: string;
}

interface LeasePolicyPlan {
  readonly policy: {
    readonly name: string;
    readonly windows: readonly {
      readonly name: string;
      readonly algorithm: string;
      readonly limit: number;
    }[];
  };
  readonly key: string;
}

/**
 * A lease when the decision spends something and one of its windows is a `concurrency` window;
 * undefined otherwise (peeks take no lease, and plans without one cost nothing more).
 */
export function planLease(
  decisionId: string,
  policySetVersion: string,
  shard: ShardKeys,
  selectors: NormalizedSelectors,
  cost: number,
  policies: readonly LeasePolicyPlan[],
): PlannedLease | undefined {
  if (cost === 0 || !hasConcurrency(policies)) return undefined;
  const windows = policies.flatMap(({ policy, key }) =>
    policy.windows
      .filter((w) => w.algorithm === 'concurrency')
      .map((w) => ({ policy: policy.name, window: w.name, key, limit: w.limit })),
  );
  const id = leaseIdOf(shard.shard, decisionId);
  const payloadJson = leasePayloadJson({
    v: 1,
    lease_id: id,
    id: decisionId,
    policy_set_version: policySetVersion,
    ...(selectors.tenant === undefined ? {} : { tenant: selectors.tenant }),
    selectors,
    units: cost,
    windows,
  });
  return { id, redisKey: leaseKey(shard, decisionId), payloadJson };
}

/** Without allocating: this runs for every decision, nearly all without a concurrency window. */
function hasConcurrency(policies: readonly LeasePolicyPlan[]): boolean {
  for (const { policy } of policies)
    for (const w of policy.windows) if (w.algorithm === 'concurrency') return true;
  return false;
}
