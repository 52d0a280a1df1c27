import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ACCESS_KEY, PER_TENANT_KEY } from './http.constants';

/** What a token may do: ask for decisions, read usage and audit, operate the service. */
export const ROLES = ['decide', 'query', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What a route needs from the `Authorization` header:
 * - a role: a token that holds it (`decide` → decisions, `query` → projector queries, `admin` →
 *   control endpoints);
 * - `public`: nothing (health and metrics, for probes and scrapers);
 * - `caller`: any accepted token, whatever its roles — the header-stage check of a hook that runs
 *   before the route's own check (the route then asks for its role).
 */
export type Access = Role | 'public' | 'caller';

export interface AccessOptions {
  /**
   * The handler judges the tenant itself, once it has read it (`TokenGrant.tenantRefusal`). Without
   * this a tenant-scoped token is refused at once: a call that names no tenant may read or change
   * every tenant's state, so it needs a token without a tenant list.
   */
  readonly perTenant?: boolean;
}

export const RequireAccess = (
  access: Access,
  options: AccessOptions = {},
): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(ACCESS_KEY, access), SetMetadata(PER_TENANT_KEY, options.perTenant === true));
