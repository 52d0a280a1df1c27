import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';

/** Largest cost a request can name at all; a policy's max_cost (413) is usually far lower. */
export const MAX_COST = 2_147_483_647;
export const MAX_BATCH = 1000;

/**
 * `POST /v1/decisions` body. Shapes only: the engine normalizes and validates values (selector
 * identity, cost against max_cost, idempotency key length) and answers with the decision codes.
 */
export class DecisionRequestDto {
  /** `tenant`, `principal`, `token`, `client`, `route` → string. */
  @IsDefined({ message: 'selectors is required' })
  @IsObject({ message: 'selectors must be an object of strings' })
  selectors!: Record<string, unknown>;

  /** Free attributes for `match` / `unless`. */
  @IsOptional()
  @IsObject({ message: 'attributes must be an object of strings' })
  attributes?: Record<string, unknown>;

  /** Units to spend; defaults to 1. 0 reports state without consuming. */
  @IsOptional()
  @IsInt({ message: 'cost must be a whole number' })
  @Min(0, { message: 'cost must not be negative' })
  @Max(MAX_COST, { message: `cost must be at most ${MAX_COST}` })
  cost?: number;

  /** Replays the stored decision for the same request; 409 for a different one. */
  @IsOptional()
  @IsString({ message: 'idempotency_key must be a string' })
  idempotency_key?: string;
}

/** `POST /v1/decisions:batch` body: independent decisions, each answered on its own. */
export class BatchRequestDto {
  @IsArray({ message: 'requests must be an array' })
  @ArrayMinSize(1, { message: 'requests must hold at least 1 decision' })
  @ArrayMaxSize(MAX_BATCH, { message: `requests must hold at most ${MAX_BATCH} decisions` })
  @ValidateNested({ each: true })
  @Type(() => DecisionRequestDto)
  requests!: DecisionRequestDto[];
}
