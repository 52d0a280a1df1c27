import cluster from 'node:cluster';
import { Controller, Get, Headers, HttpCode, Res } from '@nestjs/common';
import type { Liveness } from '@tally/api-contract';
import { HealthRegistry, type ReadinessReport, statesOnly } from '@tally/observability';
import { type FastifyReply } from 'fastify';
import { BearerTokens, RequireAccess } from '@tally/auth';

/**
 * Liveness and readiness, the same shape in every app. Served here, not by @tally/observability:
 * which caller sees what is an HTTP decision (access, tokens), and observability stays below http.
 */
@Controller()
@RequireAccess('public')
export class HealthController {
  constructor(
    private readonly health: HealthRegistry,
    private readonly tokens: BearerTokens,
  ) {}

  /** Liveness: the process answers. Never touches a dependency (a slow Redis must not get us killed). */
  @Get('healthz')
  @HttpCode(200)
  live(@Res({ passthrough: true }) reply: FastifyReply): Liveness {
    // Which worker answers (TALLY_WORKERS > 1): operators and tests address a worker by connection.
    if (cluster.isWorker) void reply.header('x-tally-worker', String(process.pid));
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
    const isAdmin = this.tokens.refusal(authorization, 'admin') === undefined;
    return isAdmin ? report : statesOnly(report);
  }
}
