import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { GRANULARITIES, POLICY_KEY, POLICY_KEY_MESSAGE } from '@tally/projections';

export const POLICY_NAME = /^(?:_unmatched|[a-z0-9][a-z0-9_.-]{0,63})$/;
export const NAMESPACE_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const DIGITS = /^\d{1,6}$/;

/**
 * `GET /v1/usage` (DESIGN §4). Shapes only; ranges, times and cursors are checked by the lib's
 * parsers, which list every problem. Unknown parameters are refused by the validation pipe.
 */
export class UsageQueryDto {
  /** The tenant selector value. */
  @IsString({ message: 'tenant is required' })
  @Length(1, 256, { message: 'tenant must be 1 to 256 characters' })
  tenant!: string;

  /** One policy; absent: every policy (rows per policy, total counting each decision once). */
  @IsOptional()
  @IsString()
  @Matches(POLICY_NAME, { message: 'policy must be a policy name' })
  policy?: string;

  /**
   * One policy key of `policy` (raw, as the policy built it): rows and total of that key alone, from
   * the `keys:` hashes. Needs `policy`, which the lib's parser checks (it relates two parameters).
   */
  @IsOptional()
  @IsString()
  @Matches(POLICY_KEY, { message: POLICY_KEY_MESSAGE })
  key?: string;

  /** Bucket size; default `hour`. */
  @IsOptional()
  @IsIn(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` })
  granularity?: string;

  /** ISO 8601 instant with a zone; default: a granularity-dependent window before `to`. */
  @IsOptional()
  @IsString()
  from?: string;

  /** ISO 8601 instant with a zone, exclusive; default: now (the current bucket included). */
  @IsOptional()
  @IsString()
  to?: string;

  /** `next_cursor` of the previous page, verbatim. */
  @IsOptional()
  @IsString()
  cursor?: string;

  /** Bucket starts per page (1..5000, default 500). */
  @IsOptional()
  @Matches(DIGITS, { message: 'limit must be an integer from 1 to 5000' })
  limit?: string;

  /** A projection namespace other than the active one (analysts comparing a replay). */
  @IsOptional()
  @Matches(NAMESPACE_NAME, { message: 'namespace must match [a-z0-9][a-z0-9_-]{0,62}' })
  namespace?: string;
}
