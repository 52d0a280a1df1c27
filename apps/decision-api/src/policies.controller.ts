import { Controller, Get, HttpCode, type OnModuleInit, Param, Post, Query } from '@nestjs/common';
import { DecisionService } from '@tally/engine';
import {
  type PolicyList,
  type PolicyReload,
  type PolicyReloads,
  type PolicyState,
  type Wire,
} from '@tally/api-contract';
import { ApiError } from '@tally/errors';
import { Granted, RequireAccess, type TokenGrant } from '@tally/auth';
import { HTTP_STATUS_OF, reloadOverHttp } from '@tally/http';
import { shareReload } from '@tally/cluster';
import { formatDuration, PolicyStore } from '@tally/policy';
import { PolicyReloadHistory } from './policy-reloads.history';

/**
 * Control endpoints: what is in force, live counters, reload. The admin role; a tenant-scoped admin
 * token may only read the state of its tenants' counters (the other calls are about every tenant).
 */
@Controller('v1')
@RequireAccess('admin')
export class PoliciesController implements OnModuleInit {
  constructor(
    private readonly store: PolicyStore,
    private readonly decisions: DecisionService,
    private readonly reloads: PolicyReloadHistory,
  ) {}

  /** With several workers, a reload asked of one runs in all (the answer waits for every one). */
  onModuleInit(): void {
    shareReload('policy file', this.store);
  }

  @Get('policies')
  list(): Wire<PolicyList> {
    const set = this.store.current;
    return {
      version: set.version,
      loaded_at: new Date(set.loadedAt).toISOString(),
      policies: set.policies.map((p) => ({
        name: p.name,
        match: p.match,
        unless: p.unless,
        key: p.key,
        group: p.group ?? null,
        mode: p.mode,
        enabled: p.enabled,
        max_cost: p.maxCost,
        on_backend_failure: p.onBackendFailure,
        ...(p.localFallbackOverflow !== undefined && { local_fallback_overflow: p.localFallbackOverflow }),
        windows: p.windows.map((w) => ({
          name: w.name,
          role: w.role,
          algorithm: w.algorithm,
          ...(w.burst !== undefined && { burst: w.burst }),
          limit: w.limit,
          period: w.algorithm === 'calendar_month' ? '1mo' : formatDuration(w.periodMs),
        })),
      })),
    };
  }

  /** The last reloads of the policy file, newest first; rejected ones with every error (the console's Policies page). */
  @Get('policy-reloads')
  reloadHistory(): Promise<Wire<PolicyReloads>> {
    return this.reloads.list();
  }

  /** Counters of one policy for the selectors given as query parameters (`?tenant=acme&principal=p1`). */
  @Get('policies/:name/state')
  @RequireAccess('admin', { perTenant: true })
  async state(
    @Param('name') name: string,
    @Query() selectors: Record<string, unknown>,
    @Granted() grant: TokenGrant,
  ): Promise<Wire<PolicyState>> {
    const outOfScope = grant.tenantRefusal(selectors.tenant);
    if (outOfScope) throw outOfScope;
    const result = await this.decisions.state(name, selectors);
    if (!result.ok) throw new ApiError(HTTP_STATUS_OF[result.kind], result.code, result.message);
    return result.state;
  }

  /**
   * Re-reads the policy file (in every worker); an invalid file is refused with every error and the
   * running set stays.
   */
  @Post('policies::reload')
  @HttpCode(200)
  reload(): Promise<PolicyReload> {
    return reloadOverHttp(this.store, 'policy.invalid', 'policy file');
  }
}
