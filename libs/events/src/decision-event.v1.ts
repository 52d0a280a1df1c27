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
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { TallyCloudEventV1 } from './cloud-event.v1';
import { DENY_REASONS, type DenyReason } from './deny-reasons';
import { PolicyOutcomeV1 } from './event-parts.v1';
import { DECISION_EVENT_TYPE, DECISION_OUTCOMES, type DecisionOutcome } from './event-types';
import { IsStringRecord } from './string-record.validator';

/** One decision (or `count` coalesced denials of one key in one second) and why it went that way. */
export class DecisionDataV1 {
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

  /** Units asked for (a denial consumed none of them); at most 2^53 − 1, like a usage event's. */
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  cost!: number;

  /** `allowed`, `denied` or `degraded`. */
  @IsIn(DECISION_OUTCOMES)
  outcome!: DecisionOutcome;

  /** Why it was denied; required when `outcome` is `denied`, absent otherwise. */
  @ValidateIf((data: DecisionDataV1) => data.outcome === 'denied' || data.reason !== undefined)
  @IsIn(DENY_REASONS)
  reason?: DenyReason;

  /** The backend failure behind a `degraded` outcome. */
  @IsOptional()
  @IsString()
  degraded_cause?: string;

  /** The caller's idempotency key, when given. */
  @IsOptional()
  @IsString()
  idempotency_key?: string;

  /** How many decisions this event stands for: 1, or the coalesced denials of one key in one second. */
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  count!: number;

  /** Every applicable policy with its mode, key and windows' state. */
  @IsArray()
  @ValidateNested({ each: true })
  @Type(() => PolicyOutcomeV1)
  policies!: PolicyOutcomeV1[];
}

/** `tally.decision.v1`: every decision, denials included. */
export class DecisionEventV1 extends TallyCloudEventV1 {
  /** Always `tally.decision.v1`. */
  @Equals(DECISION_EVENT_TYPE)
  type!: typeof DECISION_EVENT_TYPE;

  /** The decision. */
  @IsObject()
  @ValidateNested()
  @Type(() => DecisionDataV1)
  data!: DecisionDataV1;
}
