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
  /**
   * Second marks, in the hour of the event's id time (`idTimeMs`), of the applied events whose id
   * hour is not their event hour: checked and written like `dedup`. Every event is thereby marked in
   * its id hour, so two copies of one decision with different times (`allowed` at Redis time,
   * `degraded` at the API's) meet in one set whatever hours their times fall in. Absent or empty
   * for almost every batch: an id is minted milliseconds before its event time.
   */
  readonly idDedup?: readonly DedupMark[];
  /** Events folded in. */
  readonly applied: number;
  /** Events skipped as already applied (earlier in the batch or per `FoldContext.isApplied`). */
  readonly duplicates: number;
  /**
   * Events left out because the namespace cannot take them (`FoldContext.limits`, or a sum of the
   * step that would pass 2^53 − 1): the sink dead-letters them before it writes the step, and their
   * effects are in no other field of the delta. In the order they were added.
   */
  readonly refused: readonly RefusedIndex[];
}

/** An event the fold left out, by its position among the events added (duplicates included). */
export interface RefusedIndex {
  readonly index: number;
  /** `overflow: …`, `corrupt: …` or `wrongtype: …`: the dead-letter reason. */
  readonly reason: string;
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
  /**
   * True when the event was refused (and dead-lettered) by an earlier fold of the same step: it is
   * left out again, counted neither as applied nor as a duplicate nor as newly refused.
   */
  readonly isRefused?: (token: string) => boolean;
  /** What the namespace can still take where a step was refused (`StepLimits`); absent: no limit known. */
  readonly limits?: FoldLimits;
}

/**
 * Room left in the cells a refused step named, in the fold's own terms (tenants, policies, buckets),
 * so the fold can tell which events fit, one at a time in order, and which are the culprits.
 */
export interface FoldLimits {
  /** Whether any usage or audit cell of this tenant is limited (the others skip the checks). */
  touches(tenant: string | null): boolean;
  /** Why no event of this hour can be applied (its dedup set is unusable), if so. */
  dedupRefusal(timeMs: number): string | undefined;
  /** Why no audit row of this tenant can be written, if so. */
  auditRefusal(tenant: string | null): string | undefined;
  /** A policy's (or `_all`'s) cell of a `usage:` hash. */
  totalRoom(
    tenant: string | null,
    policy: string,
    granularity: Granularity,
    start: number,
  ): CellRoom | undefined;
  /** A policy key's cell of a `keys:` hash. */
  keyRoom(
    tenant: string | null,
    policy: string,
    key: string,
    granularity: Granularity,
    start: number,
  ): CellRoom | undefined;
}

/** What is stored in a cell (room left: `MAX_AGGREGATE` minus it), or why it takes nothing at all. */
export type CellRoom =
  | { readonly kind: 'stored'; readonly cost: number; readonly count: number }
  | { readonly kind: 'refused'; readonly reason: string };
