import { Body, Controller, Delete, Get, HttpCode, Param, Put, Query, Res } from '@nestjs/common';
import {
  OverrideListQuerySchema,
  OverridePutSchema,
  OverrideTargetQuerySchema,
  type OverrideItem,
  type OverrideList,
  type OverrideListQuery,
  type OverridePut,
  type OverrideTargetQuery,
  type Wire,
} from '@tally/api-contract';
import { keyOnWire, OverridesService, type Override, type OverrideResult } from '@tally/engine';
import { ApiError } from '@tally/errors';
import { Granted, RequireAccess, type TokenGrant } from '@tally/auth';
import { QuerySchemaPipe } from '@tally/http';
import type { FastifyReply } from 'fastify';

const LIST_QUERY = new QuerySchemaPipe(OverrideListQuerySchema);
const TARGET_QUERY = new QuerySchemaPipe(OverrideTargetQuerySchema);
const PUT_BODY = new QuerySchemaPipe(OverridePutSchema);

/**
 * Runtime overrides (`/v1/overrides`): wiring only, the rules are in @tally/engine's OverridesService.
 * A tenant-scoped token reads and changes only its tenants' overrides: judged once the tenant is known
 * (from the key, or the `tenant` parameter).
 */
@Controller('v1/overrides')
export class OverridesController {
  constructor(private readonly overrides: OverridesService) {}

  @Get()
  @RequireAccess('overrides:read', { perTenant: true })
  async list(
    @Query(LIST_QUERY) query: OverrideListQuery,
    @Granted() grant: TokenGrant,
  ): Promise<Wire<OverrideList>> {
    const refusal = grant.tenantRefusal(query.tenant);
    if (refusal) throw refusal;
    const page = answer(await this.overrides.list(query));
    return { items: page.items.map(itemOf), next_cursor: page.nextCursor };
  }

  @Get(':policy/:key')
  @RequireAccess('overrides:read', { perTenant: true })
  async get(
    @Param('policy') policy: string,
    @Param('key') key: string,
    @Query(TARGET_QUERY) query: OverrideTargetQuery,
    @Granted() grant: TokenGrant,
  ): Promise<Wire<OverrideItem>> {
    this.judgeTenant({ policy, key, tenant: query.tenant }, grant);
    return itemOf(answer(await this.overrides.get({ policy, key, tenant: query.tenant })));
  }

  /** 201 when there was none in force, 200 when it replaced one. */
  @Put(':policy/:key')
  @RequireAccess('overrides:write', { perTenant: true })
  async put(
    @Param('policy') policy: string,
    @Param('key') key: string,
    @Query(TARGET_QUERY) query: OverrideTargetQuery,
    @Body(PUT_BODY) body: OverridePut,
    @Granted() grant: TokenGrant,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Wire<OverrideItem>> {
    const address = { policy, key, tenant: query.tenant };
    this.judgeTenant(address, grant);
    const written = answer(await this.overrides.put(address, body, grant.name));
    void reply.status(written.before === null ? 201 : 200);
    return itemOf(written.after as Override);
  }

  @Delete(':policy/:key')
  @HttpCode(204)
  @RequireAccess('overrides:write', { perTenant: true })
  async remove(
    @Param('policy') policy: string,
    @Param('key') key: string,
    @Query(TARGET_QUERY) query: OverrideTargetQuery,
    @Granted() grant: TokenGrant,
  ): Promise<void> {
    this.judgeTenant({ policy, key, tenant: query.tenant }, grant);
    answer(await this.overrides.remove({ policy, key, tenant: query.tenant }, grant.name));
  }

  /** The tenant scope, before anything is read or written (an invalid address is judged as a 400 below). */
  private judgeTenant(address: { policy: string; key: string; tenant?: string }, grant: TokenGrant): void {
    if (grant.tenants === undefined) return;
    const target = this.overrides.target(address);
    if (!target.ok) return;
    const refusal = grant.tenantRefusal(target.value.tenant ?? undefined);
    if (refusal) throw refusal;
  }
}

function answer<T>(result: OverrideResult<T>): T {
  if (result.ok) return result.value;
  if (result.kind === 'not_found')
    throw new ApiError(404, 'override.not_found', 'no override in force for that policy and key');
  throw new ApiError(400, 'request.invalid', 'the request is invalid', [...result.errors]);
}

export function itemOf(o: Override): Wire<OverrideItem> {
  return {
    policy: o.policy,
    key: keyOnWire(o.key),
    tenant: o.tenant,
    limits: { ...o.limits },
    expires_at: o.expiresAtMs === null ? null : new Date(o.expiresAtMs).toISOString(),
    reason: o.reason,
    set_by: o.setBy,
    version: o.version,
    updated_at: new Date(o.updatedAtMs).toISOString(),
  };
}
