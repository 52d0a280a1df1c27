import { MAX_AGGREGATE } from '../fold/exact-counter';
import type { Granularity } from '../fold/granularity';
import { formatInstant } from './usage-page';

/** Where an unreadable usage value was found. */
export interface CorruptUsage {
  readonly namespace: string;
  readonly tenant: string;
  /** The policy, or `_all` for the all-policies aggregate of a `usage:` hash. */
  readonly policy: string;
  readonly granularity: Granularity;
  readonly startMs: number;
  /** A `keys:` field (the policy key); absent: the policy's `cost:` / `count:` pair of a `usage:` hash. */
  readonly key?: string;
}

/**
 * A stored usage value that is not what the projector writes: a `keys:` field that is not
 * `<cost>:<count>`, or a `usage:` `cost:` / `count:` field that is not a decimal integer from 0 to
 * 2^53 − 1 (the projector never stores more: every number it answers is exact).
 * apply-batch.lua never writes one, so it is a namespace written by an older layout or edited by
 * hand: any number read from it (or a bucket skipped) would be a silently wrong bill, so the query
 * fails and says which bucket to look at. The cure is a replay into a new namespace; retrying does
 * not help.
 */
export class ProjectionCorruptError extends Error {
  override readonly name = 'ProjectionCorruptError';

  constructor(readonly where: CorruptUsage) {
    const bucket = `in the ${where.granularity} bucket of ${formatInstant(where.startMs)}`;
    const tenant = `tenant ${JSON.stringify(where.tenant)}`;
    super(
      where.key === undefined
        ? `projection namespace ${where.namespace}: the usage of policy ${where.policy} (${tenant}) ` +
            `${bucket} is not a decimal integer of at most ${MAX_AGGREGATE}; replay the namespace`
        : `projection namespace ${where.namespace}: the usage of key ${JSON.stringify(where.key)} ` +
            `(${tenant}, policy ${where.policy}) ${bucket} is not <cost>:<count>; replay the namespace`,
    );
  }
}
