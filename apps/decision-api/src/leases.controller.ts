import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { type LeaseReleaseBody, type Wire } from '@tally/api-contract';
import { LeaseService } from '@tally/engine';
import { ApiError, Granted, RequireAccess, type TokenGrant } from '@tally/http';

const RELEASE_SUFFIX = ':release';

/**
 * `POST /v1/leases/{id}:release`: gives a concurrency lease's units back. The `decide` role, with the
 * tenant judged as for decisions: a tenant-scoped token releases only leases of its tenants (checked
 * inside the release step, against the tenant the lease was taken for).
 */
@Controller('v1/leases')
@RequireAccess('decide', { perTenant: true })
export class LeasesController {
  constructor(private readonly leases: LeaseService) {}

  // The id and the `:release` verb are one path segment (Fastify cannot split a segment at `:`).
  @Post(':segment')
  @HttpCode(200)
  async release(
    @Param('segment') segment: string,
    @Granted() grant: TokenGrant,
  ): Promise<Wire<LeaseReleaseBody>> {
    if (!segment.endsWith(RELEASE_SUFFIX))
      throw new ApiError(400, 'lease.invalid_id', 'the call is POST /v1/leases/{id}:release');
    const id = segment.slice(0, -RELEASE_SUFFIX.length);
    const tenants = grant.tenants === undefined ? null : [...grant.tenants];
    const result = await this.leases.release(id, tenants);
    if (!result.ok) {
      const status = { invalid: 400, not_found: 404, forbidden: 403, unavailable: 503 }[result.kind];
      throw new ApiError(status, result.code, result.message);
    }
    return {
      lease_id: result.leaseId,
      outcome: result.outcome,
      expires_at: new Date(result.expiresAtMs).toISOString(),
      released_at: result.releasedAtMs === undefined ? null : new Date(result.releasedAtMs).toISOString(),
    };
  }
}
