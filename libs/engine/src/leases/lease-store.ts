import type { StepResult } from '../decision-store';
import type { ExtendArgs, ExtendReply } from './extend.script';
import type { ReleaseReply } from './release.script';

/**
 * The port `LeaseService` gives leases back and extends them through (`LEASE_STORE`): one script per
 * call, under the same deadline and breaker as decisions. The Redis store (`EngineService`) provides it.
 */
export interface LeaseStore {
  /** release.lua for one lease; `tenants`: the caller token's tenant list, null = any. */
  release(
    keys: { record: string; outbox: string },
    leaseId: string,
    tenants: readonly string[] | null,
  ): Promise<StepResult<ReleaseReply>>;
  /** extend.lua for one lease record. */
  extendLease(record: string, args: ExtendArgs): Promise<StepResult<ExtendReply>>;
}
