import type { AuditEntry } from './audit-entry';
import type { Granularity } from './granularity';

/**
 * Everything one batch of events changes in a projection namespace, already summed: the Redis sink
 * turns it into hash, sorted-set and set writes and runs them with the offsets in one
 * atomic step. Nothing here is Redis-specific except that the shapes match `ProjectionKeys`.
 */
export interface ProjectionDelta {
  /** Per policy key (`keys:` hashes). */
  readonly usage: readonly UsageIncrement[];
  /** Per policy, all keys summed (`usage:` hashes, what the query API reads). */
  readonly usageTotals: readonly UsageTotalIncrement[];
  /** New audit rows (ZADD … LT by `auditMember`). */
  readonly audit: readonly AuditEntry[];
  /** Policy-set versions seen in the batch, first seen time (reload bookkeeping, HSETNX-style). */
  readonly policySetVersions: readonly { readonly version: string; readonly firstSeenMs: number }[];
  /** Dedup tokens of the applied events, to add to `ids:<hour>` in the same atomic step. */
  readonly dedup: readonly DedupMark[];
  /** Events folded in. */
  readonly applied: number;
  /** Events skipped as already applied (earlier in the batch or per `FoldContext.isApplied`). */
  readonly duplicates: number;
}

export interface UsageTotalIncrement {
  readonly tenant: string | null;
  readonly policy: string;
  readonly granularity: Granularity;
  /** Bucket start, epoch ms UTC. */
  readonly start: number;
  readonly cost: number;
  readonly count: number;
}

export interface UsageIncrement extends UsageTotalIncrement {
  /** The policy's composite key value. */
  readonly key: string;
}

export interface DedupMark {
  readonly token: string;
  /** Event time; the sink picks the `ids:<hour>` set from it. */
  readonly timeMs: number;
}

/** What the sink knows about the namespace before folding a batch. */
export interface FoldContext {
  /** True when the dedup token is already in the namespace (the sink checks with SMISMEMBER first). */
  readonly isApplied?: (token: string) => boolean;
  /** Policy-set versions already recorded; reload audit rows are only made for new ones. */
  readonly knownPolicySetVersions?: ReadonlySet<string>;
}
