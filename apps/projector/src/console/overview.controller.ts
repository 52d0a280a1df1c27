import { Controller, Get } from '@nestjs/common';
import { ForbiddenError, Granted, RequireAccess, type TokenGrant } from '@tally/auth';
import { HealthRegistry, statesOnly } from '@tally/observability';
import { ConsoleSampler } from './console-sampler';
import { byOutcome, byPolicy, degradedByCause, deniedByReason } from './overview-series';

/**
 * What the console asks first: who the token is (`GET /v1/session`, any token, so that a page hides
 * what the token may not read) and the Overview: the query, admin or console role, on every tenant
 * (it sums all of them). Any of them: an admin token may not also be a query token (tokens file rule),
 * and an analyst, an operator and the console's one token all start on this page.
 */
@Controller('v1')
export class OverviewController {
  constructor(
    private readonly sampler: ConsoleSampler,
    private readonly health: HealthRegistry,
  ) {}

  @Get('session')
  @RequireAccess('caller', { perTenant: true })
  session(@Granted() grant: TokenGrant) {
    return {
      name: grant.name,
      roles: [...grant.roles].sort(),
      tenants: grant.tenants === undefined ? null : [...grant.tenants].sort(),
    };
  }

  @Get('overview')
  @RequireAccess('caller')
  async overview(@Granted() grant: TokenGrant) {
    if (!grant.allows('query') && !grant.allows('admin'))
      throw new ForbiddenError('the overview needs the query or the admin role', grant.name);
    const own = statesOnly(await this.health.report());
    return {
      interval_ms: this.sampler.intervalMs,
      decisions: this.sampler.rates(byOutcome),
      policies: this.sampler.rates(byPolicy),
      denials: this.sampler.rates(deniedByReason),
      degraded: this.sampler.rates(degradedByCause),
      health: {
        projector: { status: own.status, components: own.components },
        'decision-api': this.sampler.healthOf('decision-api'),
        relay: this.sampler.healthOf('relay'),
      },
    };
  }
}
