import { Controller, Get, Logger, Query } from '@nestjs/common';
import {
  AuditQuerySchema,
  TopKeysQuerySchema,
  UsageQuerySchema,
  type AuditQuery,
  type TopKeysQueryParams,
  type UsageQuery,
} from '@tally/api-contract';
import { ApiError } from '@tally/errors';
import { Granted, RequireAccess, type TokenGrant } from '@tally/auth';
import { QuerySchemaPipe } from '@tally/http';
import {
  ProjectionCorruptError,
  ProjectionNamespaces,
  ProjectionQueries,
  type AuditView,
  type QueryResult,
  type TopKeysView,
  type UsageView,
} from '@tally/projections';

const logger = new Logger('auth');
/** Each query string against its published schema, compiled once (the one definition of its shape). */
const USAGE_QUERY = new QuerySchemaPipe(UsageQuerySchema);
const TOP_KEYS_QUERY = new QuerySchemaPipe(TopKeysQuerySchema);
const AUDIT_QUERY = new QuerySchemaPipe(AuditQuerySchema);

/**
 * Usage, top keys and audit queries over the projections (DESIGN §4): the query role, and a
 * tenant-scoped token only for its tenants (the tenant-less audit trail needs an unscoped token).
 */
@Controller('v1')
@RequireAccess('query', { perTenant: true })
export class ProjectionsController {
  constructor(
    private readonly namespaces: ProjectionNamespaces,
    private readonly queries: ProjectionQueries,
  ) {}

  @Get('usage')
  async usage(@Query(USAGE_QUERY) query: UsageQuery, @Granted() grant: TokenGrant): Promise<UsageView> {
    inScope(grant, query.tenant);
    const { namespace, ...request } = query;
    return answer(await this.queries.usage(await this.namespace(namespace), request).catch(corrupt));
  }

  @Get('top-keys')
  async topKeys(
    @Query(TOP_KEYS_QUERY) query: TopKeysQueryParams,
    @Granted() grant: TokenGrant,
  ): Promise<TopKeysView> {
    inScope(grant, query.tenant);
    const { namespace, ...request } = query;
    return answer(await this.queries.topKeys(await this.namespace(namespace), request).catch(corrupt));
  }

  @Get('audit')
  async audit(@Query(AUDIT_QUERY) query: AuditQuery, @Granted() grant: TokenGrant): Promise<AuditView> {
    inScope(grant, query.tenant);
    const { namespace, ...request } = query;
    return answer(await this.queries.audit(await this.namespace(namespace), request).catch(corrupt));
  }

  private async namespace(requested: string | undefined): Promise<string> {
    const namespace = await this.namespaces.resolve(requested);
    if (namespace !== null) return namespace;
    throw new ApiError(
      404,
      'namespace.not_found',
      requested === undefined
        ? 'no projection namespace is active yet (start the projector)'
        : // The name came in the query string: never echoed (a caller may have put anything there).
          'the projection namespace given in `namespace` does not exist',
    );
  }
}

/** The tenant stage, once the query is valid (a scoped token's 400s say nothing about other tenants). */
function inScope(grant: TokenGrant, tenant: string | undefined): void {
  const refusal = grant.tenantRefusal(tenant);
  if (!refusal) return;
  logger.warn(`auth.forbidden: token ${grant.name} on a projector query: ${refusal.message}`);
  throw refusal;
}

function answer<T>(result: QueryResult<T>): T {
  if (result.ok) return result.value;
  const errors = result.errors.map((e) => ({ path: e.field, message: e.message }));
  throw new ApiError(400, 'request.invalid', 'the request is invalid', errors);
}

/**
 * A stored value the layout cannot read is the server's fault, not the request's, and retrying does
 * not cure it (a replay does): 500 with its own stable code and a message naming the bucket, logged
 * as an operating condition (ApiError) rather than an anonymous `internal` bug.
 */
function corrupt(error: unknown): never {
  if (error instanceof ProjectionCorruptError) throw new ApiError(500, 'projection.corrupt', error.message);
  throw error;
}
