import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsOptional, ValidateNested } from 'class-validator';
import { ALGORITHMS, FAIL_MODES, OVERFLOW_MODES, POLICY_MODES, WINDOW_ROLES } from './policy.types';
import {
  IsBool,
  IsBurst,
  IsKeyDims,
  IsList,
  IsMapping,
  IsName,
  IsOneOf,
  IsLeaseTtl,
  IsPeriod,
  IsPositiveInteger,
} from './policy-file.rules';

/**
 * The policy file exactly as written (DESIGN §2): snake_case like the YAML, so that validation paths
 * name the fields the operator typed. Compiled into `policy.types.ts` shapes once valid.
 */

const NESTED = 'each entry must be a mapping';

export class WindowDto {
  @IsName() name!: unknown;
  @IsOneOf(WINDOW_ROLES) role!: unknown;
  @IsOneOf(ALGORITHMS) algorithm!: unknown;
  @IsPositiveInteger() limit!: unknown;
  @IsPeriod() period?: unknown;
  /** `concurrency` only (and required there): how long a lease holds its units unless released. */
  @IsLeaseTtl() lease_ttl?: unknown;
  /** `gcra` only (and required there): how many units may pass at once. */
  @IsBurst() burst?: unknown;
}

export class PolicyDto {
  @IsName() name!: unknown;
  @IsOptional() @IsMapping() match?: unknown;
  @IsOptional() @IsMapping() unless?: unknown;
  /** Envoy's wildcard values: name → value prefixes, OR-ed with `match`'s exact values for that name. */
  @IsOptional() @IsMapping() match_prefix?: unknown;
  @IsOptional() @IsMapping() unless_prefix?: unknown;
  @IsKeyDims() key!: unknown;

  @IsList('windows', { nonEmpty: true })
  @ValidateNested({ each: true, message: NESTED })
  @Type(() => WindowDto)
  windows!: unknown;

  @IsOptional() @IsPositiveInteger() max_cost?: unknown;
  @IsOptional() @IsOneOf(FAIL_MODES) on_backend_failure?: unknown;
  @IsOptional() @IsOneOf(OVERFLOW_MODES) local_fallback_overflow?: unknown;
  @IsOptional() @IsOneOf(POLICY_MODES) mode?: unknown;
  @IsOptional() @IsBool() enabled?: unknown;
  @IsOptional() @IsName() group?: unknown;
}

export class PolicyFileDto {
  @IsList('policies', { nonEmpty: false })
  @ValidateNested({ each: true, message: NESTED })
  @Type(() => PolicyDto)
  policies!: unknown;
}
