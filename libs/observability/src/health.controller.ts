import { Controller, Get, Headers, HttpCode, Inject, Optional, Res } from '@nestjs/common';
import type { Liveness } from '@tally/api-contract';
import { BearerTokens, RequireAccess } from '@tally/http';
import { type FastifyReply } from 'fastify';
import { HealthRegistry, type ReadinessReport, statesOnly } from './health.registry';

/** Liveness and readiness, the same shape in every app. */
@Controller()
@RequireAccess('public')
export class HealthController {
  constructor(
    private readonly health: HealthRegistry,
    // Absent in a worker-only context (no HttpModule): then nobody sees the details.
    @Optional() @Inject(BearerTokens) private readonly tokens?: BearerTokens,
  ) {}

  /** Liveness: the process answers. Never touches a dependency (a slow Redis must not get us killed). */
  @Get('healthz')
  @HttpCode(200)
  live(): Liveness {
    return { status: 'ok' };
  }

  /**
   * Readiness: 200 when healthy or degraded (still serving), 503 when unavailable. Public, for probes,
   * with each component's state only; its detail (a driver's error text, with hosts and ports) goes
   * to the admin token.
   */
  @Get('readyz')
  async ready(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ReadinessReport> {
    const report = await this.health.report();
    void reply.status(report.status === 'unavailable' ? 503 : 200);
    const isAdmin = this.tokens !== undefined && this.tokens.refusal(authorization, 'admin') === undefined;
    return isAdmin ? report : statesOnly(report);
  }
}
