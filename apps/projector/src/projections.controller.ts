import { Controller, Get, Query } from '@nestjs/common';
import { ApiError, RequireAccess } from '@tally/http';
import {
  ProjectionQueries,
  ProjectionStore,
  type AuditView,
  type QueryResult,
  type UsageView,
} from '@tally/projections';
import { AuditQueryDto } from './audit-query.dto';
import { UsageQueryDto } from './usage-query.dto';

/** Usage and audit queries over the projections (DESIGN §4); any caller token. */
@Controller('v1')
@RequireAccess('caller')
export class ProjectionsController {
  constructor(
    private readonly store: ProjectionStore,
    private readonly queries: ProjectionQueries,
  ) {}

  @Get('usage')
  async usage(@Query() query: UsageQueryDto): Promise<UsageView> {
    const { namespace, ...request } = query;
    return answer(await this.queries.usage(await this.namespace(namespace), request));
  }

  @Get('audit')
  async audit(@Query() query: AuditQueryDto): Promise<AuditView> {
    const { namespace, ...request } = query;
    return answer(await this.queries.audit(await this.namespace(namespace), request));
  }

  private async namespace(requested: string | undefined): Promise<string> {
    const namespace = await this.store.resolveNamespace(requested);
    if (namespace !== null) return namespace;
    throw new ApiError(
      404,
      'namespace.not_found',
      requested === undefined
        ? 'no projection namespace is active yet (start the projector)'
        : `projection namespace ${requested} does not exist`,
    );
  }
}

function answer<T>(result: QueryResult<T>): T {
  if (result.ok) return result.value;
  const errors = result.errors.map((e) => ({ path: e.field, message: e.message }));
  throw new ApiError(400, 'request.invalid', 'the request is invalid', errors);
}
