import { Body, Controller, Delete, Get, Headers, Inject, Param, Put, Query, Res } from '@nestjs/common';
import {
  OverrideListQuerySchema,
  OverridePutSchema,
  OverrideTargetQuerySchema,
  type OverrideListQuery,
  type OverridePut,
  type OverrideTargetQuery,
} from '@tally/api-contract';
import { ApiError } from '@tally/errors';
import { QuerySchemaPipe } from '@tally/http';
import { RequireAccess } from '@tally/auth';
import type { FastifyReply } from 'fastify';
import { CONSOLE_OPTIONS, type ConsoleOptions } from './console.constants';
import { upstreamCall } from './upstream.client';

const LIST_QUERY = new QuerySchemaPipe(OverrideListQuerySchema);
const TARGET_QUERY = new QuerySchemaPipe(OverrideTargetQuerySchema);
const PUT_BODY = new QuerySchemaPipe(OverridePutSchema);
const DECISION_API = 'TALLY_CONSOLE_DECISION_API_URL';
/** The decision API's own refusals of a request, passed on with their code, message and fields. */
const PASSED_ON = new Set([400, 401, 403, 404]);

/**
 * The console's Overrides page: the decision API's `/v1/overrides`, forwarded with the caller's own
 * `Authorization` (ADR 0007): the decision API judges the token, its roles and its tenants, so the
 * projector gains no privilege. `perTenant`: a tenant-scoped overrides token is let through here and
 * judged there, where the tenant of a key is known. The parameters are checked here with the
 * contract's schemas too, so that nothing but a valid call leaves the projector.
 */
@Controller('v1/decision-api/overrides')
export class OverridesForwardController {
  constructor(@Inject(CONSOLE_OPTIONS) private readonly options: ConsoleOptions) {}

  @Get()
  @RequireAccess('overrides:read', { perTenant: true })
  list(
    @Query(LIST_QUERY) query: OverrideListQuery,
    @Headers('authorization') authorization?: string,
  ): Promise<unknown> {
    const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined));
    return this.forward('GET', `/v1/overrides?${search.toString()}`, authorization);
  }

  @Put(':policy/:key')
  @RequireAccess('overrides:write', { perTenant: true })
  put(
    @Param('policy') policy: string,
    @Param('key') key: string,
    @Query(TARGET_QUERY) query: OverrideTargetQuery,
    @Body(PUT_BODY) body: OverridePut,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Headers('authorization') authorization?: string,
  ): Promise<unknown> {
    return this.forward('PUT', target(policy, key, query), authorization, body, reply);
  }

  @Delete(':policy/:key')
  @RequireAccess('overrides:write', { perTenant: true })
  remove(
    @Param('policy') policy: string,
    @Param('key') key: string,
    @Query(TARGET_QUERY) query: OverrideTargetQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
    @Headers('authorization') authorization?: string,
  ): Promise<unknown> {
    return this.forward('DELETE', target(policy, key, query), authorization, undefined, reply);
  }

  /**
   * The decision API's answer with its own status (200/201/204); its refusals of the request keep
   * their code; anything else is the console's `upstream.unreachable`, as for the policies.
   */
  private async forward(
    method: 'GET' | 'PUT' | 'DELETE',
    path: string,
    authorization: string | undefined,
    body?: unknown,
    reply?: FastifyReply,
  ): Promise<unknown> {
    const res = await upstreamCall(this.options.decisionApiUrl, DECISION_API, path, {
      method,
      authorization,
      body,
    });
    if (res.status >= 200 && res.status < 300) {
      if (reply) void reply.status(res.status);
      return res.text === '' ? undefined : res.json();
    }
    const refusal = parsed(res.text);
    if (PASSED_ON.has(res.status) && refusal.code !== undefined)
      throw new ApiError(res.status, refusal.code, refusal.message ?? '', refusal.errors);
    throw new ApiError(502, 'upstream.unreachable', `${DECISION_API}: ${res.status} ${refusal.code ?? ''}`);
  }
}

function target(policy: string, key: string, query: OverrideTargetQuery): string {
  const path = `/v1/overrides/${encodeURIComponent(policy)}/${encodeURIComponent(key)}`;
  return query.tenant === undefined
    ? path
    : `${path}?${new URLSearchParams({ tenant: query.tenant }).toString()}`;
}

function parsed(text: string): {
  code?: string;
  message?: string;
  errors?: { path: string; message: string }[];
} {
  try {
    return JSON.parse(text) as ReturnType<typeof parsed>;
  } catch {
    return {};
  }
}
