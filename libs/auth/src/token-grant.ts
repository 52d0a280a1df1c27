import { type Access, type Role, ROLES } from './access.decorator';
import { ApiError } from '@tally/errors';

/**
 * What one accepted token may do: its roles and, when it has one, its tenant allow-list. Built once
 * per token when the token set is compiled, so checking a request allocates nothing.
 */
export class TokenGrant {
  constructor(
    /** For logs and audit; never the token or its digest. */
    readonly name: string,
    readonly roles: ReadonlySet<Role>,
    /** `undefined`: every tenant. */
    readonly tenants?: ReadonlySet<string>,
  ) {}

  /** Whether the header stage lets this token through to a route needing `access`. */
  allows(access: Access): boolean {
    return access === 'public' || access === 'caller' || this.roles.has(access) || this.implies(access);
  }

  /**
   * Overrides are operations: `admin` holds both scopes, and who may change them may read them. The
   * console's operator reads usage and operates the service with one token: `console` holds `query`
   * and `admin` (so the overrides too), but never `decide`, so it cannot be handed to a service as its
   * caller token (the mix-up that forbids `admin` beside `decide` or `query` in one entry).
   */
  private implies(access: Access): boolean {
    const admin = this.roles.has('admin') || this.roles.has('console');
    if (access === 'query' || access === 'admin') return this.roles.has('console');
    if (access === 'overrides:read') return admin || this.roles.has('overrides:write');
    return access === 'overrides:write' && admin;
  }

  /**
   * The tenant stage: `undefined` when this token may act for `tenant` — a selector or query value as
   * sent; strings are trimmed as the engine normalizes selectors, so " acme " is judged as the tenant
   * it will be counted under — else the 403 to answer. A tenant-scoped token must name one of its
   * tenants: a call without a tenant (or with one that is not a string) is refused.
   */
  tenantRefusal(tenant: unknown): ForbiddenError | undefined {
    if (this.tenants === undefined) return undefined;
    if (typeof tenant !== 'string') return new ForbiddenError(NO_TENANT, this.name);
    return this.tenants.has(tenant.trim()) ? undefined : new ForbiddenError(OTHER_TENANT, this.name);
  }
}

/** `TALLY_AUTH=none`: every role, every tenant. */
export const OPEN_GRANT = new TokenGrant('(auth none)', new Set(ROLES));

const NO_TENANT = 'this token is limited to some tenants: the call must name one of them';
// Never the tenant itself: the caller knows what it sent, logs do not need it.
const OTHER_TENANT = 'this token may not act for this tenant';

/** A 403 of a known token: carries the token's name for the log line (never sent to the caller). */
export class ForbiddenError extends ApiError {
  constructor(
    message: string,
    readonly tokenName: string,
  ) {
    super(403, 'auth.forbidden', message);
  }
}
