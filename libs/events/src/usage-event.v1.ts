import 'reflect-metadata';
import { Type } from 'class-transformer';
import {
  Equals,
  IsArray,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { TallyCloudEventV1 } from './cloud-event.v1';
import { PolicyOutcomeV1 } from './event-parts.v1';
import { USAGE_EVENT_TYPE } from './event-types';
import { IsStringRecord } from './string-record.validator';

/**
 * What an allowed decision spent. Billing sums `cost` of these events; nothing else is the ledger.
 * `degraded` decisions (allowed under fail_open) are included: the caller did spend the units even
 * though Redis could not count them.
 */
export class UsageDataV1 {
  /** Content hash of the policy set that decided. */
  @IsString()
  @IsNotEmpty()
  policy_set_version!: string;

  /** The tenant selector, when the request had one. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  tenant?: string;

  /** Normalized selectors of the request; `token` is an HMAC, never the raw token. */
  @IsStringRecord()
  selectors!: Record<string, string>;

  /** Free request attributes (enough to re-evaluate the request under other policies). */
  @IsStringRecord()
  attributes!: Record<string, string>;

  /**
   * Units spent; a usage event always spends something. At most 2^53 − 1, the largest integer every
   * consumer reads exactly (the decision API's ceiling, `TALLY_MAX_COST`, keeps it far below).
   */
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  cost!: number;

  /** `allowed`, or `degraded` when allowed under fail_open without counting. */
  @IsIn(['allowed', 'degraded'])
  outcome!: 'allowed' | 'degraded';

  /** The backend failure behind a `degraded` outcome. */
  @IsOptional()
  @IsString()
  degraded_cause?: string;

  /** The caller's idempotency key, when given. */
  @IsOptional()
  @IsString()
  idempotency_key?: string;

  /** Every applicable policy with its mode, key and windows' remaining. */
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PolicyOutcomeV1)
  policies!: PolicyOutcomeV1[];
}

/** `tally.usage.v1`: one allowed decision with cost > 0. */
export class UsageEventV1 extends TallyCloudEventV1 {
  /** Always `tally.usage.v1`. */
  @Equals(USAGE_EVENT_TYPE)
  type!: typeof USAGE_EVENT_TYPE;

  /** What was spent, by whom, under which policies. */
  @IsObject()
  @ValidateNested()
  @Type(() => UsageDataV1)
  data!: UsageDataV1;
}
