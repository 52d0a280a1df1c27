import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { GRANULARITIES, MAX_TOP_KEYS_LIMIT } from '@tally/projections';
import { NAMESPACE_NAME, POLICY_NAME } from './usage-query.dto';

/**
 * `GET /v1/top-keys`. Shapes only, with the same rules as `/v1/usage`; the instant, the limit's range
 * and the granularity are checked by the lib's parser, which lists every problem. Unknown parameters
 * are refused by the validation pipe.
 */
export class TopKeysQueryDto {
  /** The tenant selector value. */
  @IsString({ message: 'tenant is required' })
  @Length(1, 256, { message: 'tenant must be 1 to 256 characters' })
  tenant!: string;

  /** The policy whose keys are ranked: per-key usage is kept per policy. */
  @IsString({ message: 'policy is required' })
  @Matches(POLICY_NAME, { message: 'policy must be a policy name' })
  policy!: string;

  /** Size of the one bucket read; default `day`. */
  @IsOptional()
  @IsIn(GRANULARITIES, { message: `granularity must be one of ${GRANULARITIES.join(', ')}` })
  granularity?: string;

  /** ISO 8601 instant with a zone inside the bucket; default: now (the current bucket). */
  @IsOptional()
  @IsString()
  at?: string;

  /** Keys listed (1..1000, default 10). */
  @IsOptional()
  @Matches(/^\d{1,6}$/, { message: `limit must be an integer from 1 to ${MAX_TOP_KEYS_LIMIT}` })
  limit?: string;

  /** A projection namespace other than the active one. */
  @IsOptional()
  @Matches(NAMESPACE_NAME, { message: 'namespace must match [a-z0-9][a-z0-9_-]{0,62}' })
  namespace?: string;
}
