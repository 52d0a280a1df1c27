import { IsOptional, IsString, Length, Matches } from 'class-validator';
import { NAMESPACE_NAME } from './usage-query.dto';

/** `GET /v1/audit` (DESIGN §4). Unknown parameters are refused by the validation pipe. */
export class AuditQueryDto {
  /** Absent: the trail of tenant-less requests, which also holds policy reloads. */
  @IsOptional()
  @IsString()
  @Length(1, 256, { message: 'tenant must be 1 to 256 characters' })
  tenant?: string;

  /** ISO 8601 instant with a zone; default: 24 hours ago. Entries come oldest first. */
  @IsOptional()
  @IsString()
  since?: string;

  /** Entries per page (1..1000, default 100). */
  @IsOptional()
  @Matches(/^\d{1,5}$/, { message: 'limit must be an integer from 1 to 1000' })
  limit?: string;

  /** `next_cursor` of the previous page, verbatim. */
  @IsOptional()
  @IsString()
  cursor?: string;

  /** A projection namespace other than the active one. */
  @IsOptional()
  @Matches(NAMESPACE_NAME, { message: 'namespace must match [a-z0-9][a-z0-9_-]{0,62}' })
  namespace?: string;
}
