import type { Granularity } from './granularity';
import { formatInstant } from './usage-page';

/** Where an unreadable `keys:` field was found. */
export interface CorruptKeyUsage {
  readonly namespace: string;
  readonly tenant: string;
  readonly policy: string;
  readonly granularity: Granularity;
  readonly startMs: number;
  /** The field: the policy key. */
  readonly key: string;
}

/**
 * A `keys:` field whose value is not `<cost>:<count>`. apply-batch.lua refuses to write one, so it is
 * a namespace written by an older layout or edited by hand: any number read from it (or a bucket
 * skipped) would be a silently wrong bill, so the query fails and says which bucket to look at. The
 * cure is a replay into a new namespace; retrying does not help.
 */
export class ProjectionCorruptError extends Error {
  override readonly name = 'ProjectionCorruptError';

  constructor(readonly where: CorruptKeyUsage) {
    super(
      `projection namespace ${where.namespace}: the usage of key ${JSON.stringify(where.key)} ` +
        `(tenant ${JSON.stringify(where.tenant)}, policy ${where.policy}) in the ${where.granularity} bucket ` +
        `of ${formatInstant(where.startMs)} is not <cost>:<count>; replay the namespace`,
    );
  }
}
