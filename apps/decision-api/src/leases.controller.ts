import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import {
  LeaseExtendRequestSchema,
  type LeaseExtendBody,
  type LeaseReleaseBody,
  type Wire,
} from '@tally/api-contract';
import { LeaseService } from '@tally/engine';
import { ApiError } from '@tally/errors';
import { Granted, RequireAccess, type TokenGrant } from '@tally/auth';
import { QuerySchemaPipe } from '@tally/http';

const RELEASE_SUFFIX = ':release';
const EXTEND_SUFFIX = ':extend';
const EXTEND_BODY = new QuerySchemaPipe(LeaseExtendRequestSchema);

/**
 * `POST /v1/leases/{id}:release` gives a concurrency lease's units back; `POST /v1/leases/{id}:extend`
 * keeps them longer. The `decide` role, with the tenant judged as for decisions: a tenant-scoped token
 * acts only on leases of its tenants (checked inside the script, against the lease's tenant).
 */
@Controller('v1/leases')
@RequireAccess('decide', { perTenant: true })
export class LeasesController {
  constructor(private readonly leases: LeaseService) {}

  // The id and the verb are one path segment (Fastify cannot split a segment at `:`).
  @Post(':segment')
  @HttpCode(200)
  async act(
    @Param('segment') segment: string,
    @Granted() grant: TokenGrant,
    @Body() body: unknown,
  ): Promise<Wire<LeaseReleaseBody> | Wire<LeaseExtendBody>> {
    const tenants = grant.tenants === undefined ? null : [...grant.tenants];
    if (segment.endsWith(EXTEND_SUFFIX))
      return this.extend(segment.slice(0, -EXTEND_SUFFIX.length), body, tenants);
    if (!segment.endsWith(RELEASE_SUFFIX))
      throw new ApiError(400, 'lease.invalid_id', 'the call is POST /v1/leases/{id}:release or …:extend');
    const id = segment.slice(0, -RELEASE_SUFFIX.length);
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

  /** No body (or `{}`) asks for the longest TTL the lease's windows allow. */
  private async extend(
    id: string,
    body: unknown,
    tenants: readonly string[] | null,
  ): Promise<Wire<LeaseExtendBody>> {
    const { ttl_ms } = EXTEND_BODY.transform(body);
    const result = await this.leases.extend(id, ttl_ms, tenants);
    if (!result.ok) throw new ApiError(result.status, result.code, result.message);
    return {
      lease_id: result.leaseId,
      expires_at: new Date(result.expiresAtMs).toISOString(),
      ttl_ms: result.ttlMs,
      max_ttl_ms: result.maxTtlMs,
    };
  }
}
